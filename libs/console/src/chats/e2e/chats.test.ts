import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe("Dashboard: a device's chats and a chat's messages in a real browser (chromium, whole stack, simulator)", function () {
  this.timeout(150_000);

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15551800001';
  const [ana, ben] = ['15551800011', '15551800012'];

  it('When contacts wrote and the device answered, then the Chats page lists the chats with unread counts and shows a chat’s messages both ways', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Chats Shop');
    const write = (from: string, text: string) =>
      stack.simApi('POST', `/contacts/${from}/send`, { to: ACCOUNT, text });
    await write(ana, 'Hi! Is the blue jacket still in stock?');
    await write(ben, 'Can I change my delivery address?');
    await write(ana, 'Size M, please');
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length ===
        2,
      { timeoutMs: 20_000, what: 'two chats' },
    );
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: ana,
      text: 'Yes, size M is in stock: shall I reserve it?',
    });
    expect(sent.status).to.equal(202);
    await waitFor(
      async () =>
        (await stack.api<{ data: { status: string } }>('GET', `/messages/${sent.body.messageId}`)).body.data
          .status !== 'queued',
      { timeoutMs: 30_000, what: 'the answer sent' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Chats', exact: true, level: 1 }).waitFor();
    const anaRow = page.getByTestId(`chat-${ana}`);
    await anaRow.waitFor({ timeout: 15_000 });
    const rows = await page
      .locator('.chat-list [data-testid^="chat-"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')));
    expect(rows).to.deep.equal([`chat-${ana}`, `chat-${ben}`]);
    expect(await anaRow.getByLabel('2 unread').innerText()).to.equal('2');
    expect(await anaRow.innerText()).to.include('You: Yes, size M is in stock');
    expect(await page.getByTestId(`chat-${ben}`).getByLabel('1 unread').innerText()).to.equal('1');
    await screenshots(page, 'chats-list');

    await anaRow.click();
    const pane = page.getByRole('region', { name: /Messages of/ });
    await pane.getByText('Size M, please').waitFor();
    const bubbles = await pane
      .locator('.bubble')
      .evaluateAll((els) =>
        els.map((e) => [e.className.includes('bubble-out') ? 'out' : 'in', e.textContent]),
      );
    expect(bubbles.map(([dir]) => dir)).to.deep.equal(['in', 'in', 'out']);
    expect(bubbles[0]![1]).to.include('blue jacket');
    expect(bubbles[2]![1]).to.include('shall I reserve it?');
    expect(page.url()).to.include(`chat=${ana}`);
    await screenshots(page, 'chats-open');

    // Marked read through the API: the list follows (the read is no event; the page reloads on the next message).
    const read = await stack.api<{ data: { marked: number } }>('POST', `/chats/${ana}/read`);
    expect(read.body.data.marked).to.equal(2);
    await write(ben, 'Thanks!');
    await waitFor(async () => (await page.getByTestId(`chat-${ben}`).getByLabel('2 unread').count()) === 1, {
      timeoutMs: 15_000,
      what: 'the new message on the page',
    });
    expect(await anaRow.getByLabel(/unread/).count()).to.equal(0);
  });
});
