import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import {
  ADMIN_PASSWORD as PASSWORD,
  VIEWPORTS,
  screenshots,
  useDashboardStack,
} from '../../../test/browser.js';

describe('Dashboard: chat ids shown as what they are (phone, Status, channel, group) and a Messages table that keeps words whole (chromium, whole stack, simulator)', function () {
  this.timeout(180_000);

  /**
   * Elements of `root` that stick out: wider than their box (scrollWidth past clientWidth) or past
   * `root`'s sides. Two kinds are meant to: what is inside a `.table-scroll` (a wide table scrolls
   * sideways in it) and an ellipsis (`text-overflow: ellipsis`, the full text in its title).
   */
  async function overflowing(page: Page, root: string): Promise<string[]> {
    return page.locator(root).evaluateAll((roots) =>
      roots.flatMap((r) => {
        const box = r.getBoundingClientRect();
        return (
          [r, ...r.querySelectorAll('*')]
            // Shown: laid out in at least one box (a hidden element has none).
            .filter((e) => e.getClientRects().length > 0 || e === r)
            .filter((e) => !e.parentElement?.closest('.table-scroll') || e === r)
            .filter((e) => r.ownerDocument.defaultView!.getComputedStyle(e).textOverflow !== 'ellipsis')
            .filter((e) => {
              const rect = e.getBoundingClientRect();
              return (
                e.scrollWidth > e.clientWidth + 1 ||
                (!e.closest('.table-scroll') && (rect.left < box.left - 1 || rect.right > box.right + 1))
              );
            })
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`)
        );
      }),
    );
  }

  /** How many lines `word` takes where it first shows in `root` (1: it is not broken). */
  async function linesOf(page: Page, root: string, word: string): Promise<number> {
    return page.locator(root).evaluate((r, w) => {
      // 4: NodeFilter.SHOW_TEXT (the test's TypeScript knows no DOM globals).
      const walker = r.ownerDocument.createTreeWalker(r, 4);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const at = n.textContent!.indexOf(w);
        if (at < 0) continue;
        const range = r.ownerDocument.createRange();
        range.setStart(n, at);
        range.setEnd(n, at + w.length);
        return range.getClientRects().length;
      }
      return -1;
    }, word);
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15551930001';
  const [ana, ben] = ['15551930011', '15551930012'];
  // Its first 80 characters show (the rest on hover): the long words among them.
  const LONG =
    'I unsubscribed, but your messages still come; the ATTACHMENT of the last one would not open on my phone.';

  it('When a contact, a status, a channel post and a group message exist, then Messages and Chats name each by what it is, list no status chat, keep words whole and let nothing overflow at 1366 and 390 px', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Ids Shop');
    await stack.simApi('POST', `/contacts/${ana}/send`, { to: ACCOUNT, text: LONG });
    const status = await stack.api<{ data: { messageId: string } }>('POST', '/statuses', {
      text: 'Open until 20:00 today',
      audience: [ana],
    });
    expect(status.status, JSON.stringify(status.body)).to.equal(202);
    const made = await stack.api<{ data: { channel: { id: string } } }>('POST', '/channels', {
      name: 'Shop News',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const channelId = made.body.data.channel.id;
    const post = await stack.api<{ data: { messageId: string } }>('POST', `/channels/${channelId}/posts`, {
      text: 'Doors open at 9 on Saturday',
    });
    expect(post.status, JSON.stringify(post.body)).to.equal(202);
    const group = await stack.simApi<{ id: string }>('POST', '/groups', {
      subject: 'Shop team',
      members: [ben, ACCOUNT],
    });
    await stack.simApi('POST', `/groups/${group.id}/send`, { from: ben, text: 'Who opens tomorrow?' });
    for (const id of [status.body.data.messageId, post.body.data.messageId]) {
      await waitFor(
        async () =>
          (await stack.api<{ data: { status: string } }>('GET', `/messages/${id}`)).body.data.status !==
          'queued',
        { timeoutMs: 60_000, what: 'the status and the post sent' },
      );
    }
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length >=
        3,
      { timeoutMs: 20_000, what: 'the chats' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/messages?device=${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = (id: string) => page.getByTestId(`message-${id}`);
    await row(post.body.data.messageId).waitFor({ timeout: 15_000 });
    await page.getByText('Who opens tomorrow?').waitFor({ timeout: 15_000 });
    const table = '.card:has(> h2:text-is("Recent messages of ' + stack.deviceId + '"))';
    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      const text = await page.locator('main').innerText();
      expect(text, label).not.to.match(/\+status@broadcast|\+\d+@newsletter|\+\d+@g\.us/);
      const statusTo = row(status.body.data.messageId).locator('.recipient');
      expect((await statusTo.innerText()).trim(), label).to.equal('Status');
      const channelTo = row(post.body.data.messageId).locator('.recipient');
      expect(await channelTo.innerText(), label).to.match(/channel/i);
      expect(await channelTo.locator(`[title="${channelId}"]`).count(), label).to.equal(1);
      expect(await overflowing(page, table), label).to.deep.equal([]);
      for (const word of ['unsubscribed', 'messages', 'ATTACHMENT'])
        expect(await linesOf(page, table, word), `${label}: ${word}`).to.equal(1);
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    const content = await page.locator(`${table} .msg-content:has-text("unsubscribed")`).boundingBox();
    expect(content!.width).to.be.at.least(192);
    await screenshots(page, 'chat-ids-messages');

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}`);
    await page.getByTestId(`chat-${ana}`).waitFor({ timeout: 15_000 });
    await page.getByTestId(`chat-${channelId}`).waitFor();
    expect(await page.getByTestId('chat-status@broadcast').count()).to.equal(0);
    const rows = await page.locator('.chat-list [data-testid^="chat-"]').allInnerTexts();
    expect(rows.join('\n')).not.to.match(/status@broadcast|You: —/);
    const channelRow = page.getByTestId(`chat-${channelId}`);
    expect(await channelRow.innerText()).to.match(/channel/i);
    expect(await channelRow.locator(`[title="${channelId}"]`).count()).to.equal(1);
    expect(await page.getByTestId(`chat-${group.id}`).innerText()).to.include('Shop team');
    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      expect(await page.locator('main').innerText(), label).not.to.match(/\+status@broadcast|\+\d+@/);
      expect(await overflowing(page, '.chat-list'), label).to.deep.equal([]);
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    await screenshots(page, 'chat-ids-chats');
  });
});
