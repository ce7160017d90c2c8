import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe('Dashboard: the inbox — marking a chat read and replying to it from the Chats page (chromium, whole stack, simulator)', function () {
  this.timeout(150_000);

  /** A read receipt as the simulator's contact saw it (GET /contacts/:phone/read-receipts). */
  interface SimReadReceipt {
    from: string;
    type: string;
    shown: boolean;
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15551900001';
  const ana = '15551900011';

  it('When a contact wrote twice, then the operator marks the chat read (the contact sees the receipts) and replies with Enter (the contact gets it, the bubble shows)', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Inbox Shop');
    const write = (text: string) => stack.simApi('POST', `/contacts/${ana}/send`, { to: ACCOUNT, text });
    await write('Hi! Is the blue jacket still in stock?');
    await write('Size M, please');
    await waitFor(
      async () =>
        (
          await stack.api<{ data: { chats: { id: string; unreadCount: number }[] } }>('GET', '/chats')
        ).body.data.chats.find((c) => c.id === ana)?.unreadCount === 2,
      { timeoutMs: 20_000, what: 'two unread messages' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}&chat=${ana}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = page.getByTestId(`chat-${ana}`);
    await row.getByLabel('2 unread').waitFor({ timeout: 15_000 });
    const pane = page.getByRole('region', { name: /Messages of/ });
    await pane.getByText('Size M, please').waitFor();
    await screenshots(page, 'inbox-unread');

    await pane.getByRole('button', { name: 'Mark read' }).click();
    await waitFor(async () => (await row.getByLabel(/unread/).count()) === 0, {
      timeoutMs: 15_000,
      what: 'the unread badge gone',
    });
    expect(await pane.getByRole('button', { name: 'Mark read' }).count()).to.equal(0);
    let receipts: SimReadReceipt[] = [];
    await waitFor(
      async () =>
        (receipts = (
          await stack.simApi<{ receipts: SimReadReceipt[] }>('GET', `/contacts/${ana}/read-receipts`)
        ).receipts).length === 2,
      { timeoutMs: 15_000, what: 'the contact sees two read receipts' },
    );
    expect(receipts.map((r) => [r.from, r.type, r.shown])).to.deep.equal([
      [ACCOUNT, 'read', true],
      [ACCOUNT, 'read', true],
    ]);

    const box = pane.getByLabel('Reply');
    await box.fill('Yes, size M is in stock:');
    // Shift+Enter is a new line, Enter sends.
    await box.press('Shift+Enter');
    await box.type('shall I reserve it?');
    expect(await box.inputValue()).to.equal('Yes, size M is in stock:\nshall I reserve it?');
    await box.press('Enter');
    await waitFor(async () => (await box.inputValue()) === '', {
      timeoutMs: 10_000,
      what: 'the box cleared',
    });
    await waitFor(
      async () =>
        (await stack.inbox(ana)).some((m) => m.text === 'Yes, size M is in stock:\nshall I reserve it?'),
      { timeoutMs: 30_000, what: 'the contact gets the reply' },
    );
    const bubble = pane.locator('.bubble-out', { hasText: 'shall I reserve it?' });
    await bubble.waitFor({ timeout: 15_000 });
    // Its line break kept, as the contact's phone shows it.
    expect(await bubble.getByTestId('message-text').innerText()).to.equal(
      'Yes, size M is in stock:\nshall I reserve it?',
    );
    const bubbles = await pane
      .locator('.bubble')
      .evaluateAll((els) => els.map((e) => (e.className.includes('bubble-out') ? 'out' : 'in')));
    expect(bubbles).to.deep.equal(['in', 'in', 'out']);
    await screenshots(page, 'inbox-replied');

    // An empty reply is not sent: the button stays disabled.
    expect(await pane.getByRole('button', { name: 'Send' }).isDisabled()).to.equal(true);
  });
});
