/**
 * The dashboard's Messages page, and the Devices page live, in a real browser (Debian's chromium,
 * whole stack, simulator): chat ids named by what they are (phone, Status, channel, group) in
 * Messages and Chats, with a Messages table that keeps words whole; every kind of message shown as
 * what it is (status, channel post, reaction, edit, delete); the Devices and Messages pages
 * following the admin event stream, and catching up after a lost connection.
 *
 * Each `describe` is one suite as it was when it had a file of its own: its own helpers and its own
 * hooks, run one after the other. They share the mocha worker's one stack and one chromium
 * (useDashboardStack: the stack started by the worker's first dashboard suite and stopped when the
 * worker exits, reset before each suite to what a fresh one shows): each suite has a device, a
 * token, phone numbers and a browser context of its own.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, VIEWPORTS, screenshots, useDashboardStack } from './browser.js';

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

describe('Dashboard: every kind of message shown as what it is on the Messages page (chromium, whole stack, simulator)', function () {
  this.timeout(180_000);

  interface Record {
    status: string;
    deletedAt?: string;
    edits?: unknown[];
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15551910001';
  const ana = '15551910011';

  it('When a status is deleted, a channel post edited, a text gets a reaction and an edit, then Messages names each kind (Status, Channel post, Message; the edit and the delete by where they went, each with what it changes), shows the edited and deleted ones so, and lists no status of a contact as a message, at 1366 and 390 px', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Kinds Shop');
    await stack.simApi('POST', `/contacts/${ana}/send`, { to: ACCOUNT, text: 'Are you open today?' });
    const record = async (id: string) =>
      (await stack.api<{ data: Record }>('GET', `/messages/${id}`)).body.data;
    const settled = (id: string, what: string, done = (r: Record) => r.status !== 'queued') =>
      waitFor(async () => done(await record(id)), { timeoutMs: 60_000, what });

    // A status of the account, then its delete.
    const status = await stack.api<{ data: { messageId: string } }>('POST', '/statuses', {
      text: 'Open until 20:00 today',
      audience: [ana],
    });
    expect(status.status, JSON.stringify(status.body)).to.equal(202);
    const statusId = status.body.data.messageId;
    await settled(statusId, 'the status sent');
    const del = await stack.api('DELETE', `/statuses/${statusId}`);
    expect(del.status, JSON.stringify(del.body)).to.be.oneOf([200, 202]);
    await settled(statusId, 'the status deleted', (r) => r.status === 'deleted');

    // A channel post, then its edit.
    const made = await stack.api<{ data: { channel: { id: string } } }>('POST', '/channels', {
      name: 'Kinds News',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const channelId = made.body.data.channel.id;
    const post = await stack.api<{ data: { messageId: string } }>('POST', `/channels/${channelId}/posts`, {
      text: 'Doors open at 9 on Saturday',
    });
    expect(post.status, JSON.stringify(post.body)).to.equal(202);
    const postId = post.body.data.messageId;
    await settled(postId, 'the post sent');
    const edit = await stack.api('PATCH', `/channels/${channelId}/posts/${postId}`, {
      text: 'Doors open at 10 on Saturday',
    });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(202);
    await settled(postId, 'the post edited', (r) => (r.edits?.length ?? 0) > 0);

    // A contact's status the account receives.
    const set = await stack.api('PUT', '/statuses/settings', { receiveStatuses: true });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    await stack.simApi('POST', `/contacts/${ana}/status`, { text: 'Back from holidays', viewers: [ACCOUNT] });

    // An ordinary text, a reaction to it and an edit of it.
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: ana,
      text: 'Yes, until 20:00',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const textId = sent.body.messageId;
    await settled(textId, 'the text sent');
    const reacted = await stack.api<{ messageId: string }>('POST', '/send', {
      to: ana,
      reaction: { messageId: textId, emoji: '👍' },
    });
    expect(reacted.status, JSON.stringify(reacted.body)).to.equal(202);
    const edited = await stack.api<{ messageId: string }>('POST', '/send', {
      to: ana,
      edit: { messageId: textId, text: 'Yes, until 21:00' },
    });
    expect(edited.status, JSON.stringify(edited.body)).to.equal(202);
    await settled(textId, 'the text edited', (r) => (r.edits?.length ?? 0) > 0);

    await page.goto(`${stack.apiUrl}/dashboard/messages?device=${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = (id: string) => page.getByTestId(`message-${id}`);
    await row(postId).waitFor({ timeout: 15_000 });
    // The contact's status arrived (its event), and is no message of a chat on the page.
    await waitFor(
      async () =>
        (await stack.api<{ data: { events: { type: string }[] } }>('GET', '/events?types=status.received'))
          .body.data.events.length === 1,
      { timeoutMs: 20_000, what: "the contact's status received" },
    );

    // What the page lists, as the admin API gives it: each row's record.
    const listed = await page.evaluate(
      async ([device]) => {
        const res = await fetch(`/api/admin/v1/devices/${device}/messages?limit=100&direction=all`);
        return ((await res.json()) as { messages: { messageId: string; to?: string }[] }).messages;
      },
      [stack.deviceId],
    );
    // The edit of the post and the delete of the status: messages of their own, to the same chats.
    const postEdit = listed.find((m) => m.to === channelId && m.messageId !== postId)!;
    const statusDelete = listed.find((m) => m.to === 'status@broadcast' && m.messageId !== statusId)!;
    expect(postEdit, JSON.stringify(listed)).to.exist;
    expect(statusDelete, JSON.stringify(listed)).to.exist;
    await screenshots(page, 'message-kinds');

    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      const kind = async (id: string) => (await row(id).locator('[data-label="Kind"]').innerText()).trim();
      const content = (id: string) => row(id).locator('.msg-content').innerText();
      expect(await kind(statusId), label).to.equal('Status');
      expect(await kind(statusDelete.messageId), label).to.equal('Status');
      expect(await kind(postId), label).to.equal('Channel post');
      expect(await kind(postEdit.messageId), label).to.equal('Channel post');
      expect(await kind(textId), label).to.equal('Message');
      // The delete and the edit name what they change (the target's short id, the edit's text).
      expect(await content(statusDelete.messageId), label).to.match(
        new RegExp(`^Delete\\s+of ${statusId.slice(0, 8)}$`, 'i'),
      );
      expect(await content(postEdit.messageId), label).to.match(
        new RegExp(`^Edit\\s+of ${postId.slice(0, 8)}: Doors open at 10 on Saturday$`, 'i'),
      );
      expect(await page.getByText('Back from holidays').count(), label).to.equal(0);
      // The status reads deleted.
      expect(await content(statusId), label).to.match(/^Deleted/i);
      // The post reads its new text, edited.
      const post = await content(postId);
      expect(post, label).to.include('Doors open at 10 on Saturday');
      expect(post, label).to.match(/edited/);
      expect(await content(textId), label).to.match(/Yes, until 21:00[\s\S]*edited/);
      expect(await page.locator('.msg-content[data-kind="reaction"]').innerText(), label).to.include('👍');
    }
  });
});

/**
 * The Devices and Messages pages follow the admin event stream (GET /api/admin/v1/events/stream):
 * what changes shows without a reload, and nothing is polled — the page asks for its data again
 * only when an event says it changed.
 */
describe('Dashboard: the live views follow the event stream in a real browser (chromium, whole stack)', function () {
  this.timeout(120_000);

  /** A TCP proxy to the API whose connections the test can cut (`down`) and let through again (`up`). */
  async function tcpProxy(port: number) {
    const open = new Set<net.Socket>();
    let cut = false;
    const server = net.createServer((client) => {
      if (cut) return client.destroy();
      const upstream = net.connect(port, '127.0.0.1');
      for (const s of [client, upstream]) {
        open.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          open.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      down() {
        cut = true;
        open.forEach((s) => s.destroy());
      },
      up() {
        cut = false;
      },
      close: () => {
        open.forEach((s) => s.destroy());
        return new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }
  const ACCOUNT = '15550007001';

  const dashboard = useDashboardStack(this);
  /** Admin API calls the page made, by path (without the query). */
  const calls: string[] = [];
  const callsTo = (p: string) => calls.filter((c) => c === `/api/admin/v1${p}`).length;

  it('When a device links and a message is sent through the API, then the open pages show it and its status change, without reload or polling', async () => {
    const { stack, page } = dashboard();
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith('/api/admin/v1/')) calls.push(url.pathname);
    });
    await page.goto(`${stack.apiUrl}/dashboard/devices`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', exact: true, level: 1 }).waitFor();
    const live = page.getByTestId('live-state');
    await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
      what: 'the stream live',
    });
    expect(await live.innerText()).to.equal('Live');
    // The page stays this one document: a reload would lose the mark.
    await page.evaluate(() => ((globalThis as unknown as { stayed?: boolean }).stayed = true));

    // Idle: no event, no request (a poll would have asked every 2 s).
    await page.waitForTimeout(1500);
    const idle = callsTo('/devices');
    await page.waitForTimeout(3000);
    expect(callsTo('/devices'), 'requests for /devices while nothing happened').to.equal(idle);

    // The device links: its session.status events bring the row, connected.
    await stack.linkByQr(ACCOUNT, 'Live Shop');
    const row = page.getByTestId(`device-${stack.deviceId}`);
    await row
      .getByTestId(`device-status-${stack.deviceId}`)
      .getByText('Connected')
      .waitFor({ timeout: 10_000 });
    expect(await row.textContent()).to.include('Live Shop');
    expect(callsTo('/devices')).to.be.above(idle);
    await screenshots(page, 'devices-live');

    // To the device's messages, by its link (no reload).
    await row.getByRole('link', { name: 'Messages' }).click();
    await page.getByRole('heading', { name: 'Messages', exact: true, level: 1 }).waitFor();
    await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
      what: 'the device stream live',
    });
    await page.getByText(`No recent messages for ${stack.deviceId}.`).waitFor();
    await page.waitForTimeout(800);
    const before = callsTo(`/devices/${stack.deviceId}/messages`);
    await page.waitForTimeout(4500);
    expect(
      callsTo(`/devices/${stack.deviceId}/messages`),
      'requests for the messages while nothing happened',
    ).to.equal(before);

    // A message sent through the public API appears, then turns sent and delivered, on its own.
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: '15550007002',
      text: 'hello, live',
    });
    expect(sent.status).to.equal(202);
    const { messageId } = sent.body;
    const message = page.getByTestId(`message-${messageId}`);
    await message.waitFor({ timeout: 10_000 });
    const shown = () => message.locator('[data-status]').getAttribute('data-status');
    // The phone (the simulator) acknowledges it: queued, sent, then delivered, each shown as it happens.
    await waitFor(async () => ['delivered', 'read'].includes((await shown()) ?? ''), {
      timeoutMs: 20_000,
      what: 'the message delivered on the page',
    });
    const status = await shown();
    const record = (await stack.api<{ data: { status: string } }>('GET', `/messages/${messageId}`)).body;
    // The record is at least where the page is: it may have turned read since the page drew.
    expect(status === 'read' ? ['read'] : ['delivered', 'read'], JSON.stringify(record)).to.include(
      record.data.status,
    );
    expect(await message.getByTestId('message-text').innerText()).to.equal('hello, live');
    expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).to.equal(true);
    expect(callsTo(`/devices/${stack.deviceId}/messages`)).to.be.above(before);
    // One stream per page: the Devices page's closed when it went.
    await screenshots(page, 'messages-live');
  });
  it('When the connection is lost, then the badge says so, and once it is back the page catches up with what happened meanwhile', async () => {
    const { stack, page } = dashboard();
    // The page through a TCP proxy the test can cut: a network that goes away and comes back.
    const proxy = await tcpProxy(Number(new URL(stack.apiUrl).port));
    try {
      // Cookies do not depend on the port: the session of the first test signs this page in too.
      await page.goto(`${proxy.url}/dashboard/messages?device=${stack.deviceId}`);
      const live = page.getByTestId('live-state');
      await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
        what: 'the stream live',
      });
      await page.evaluate(() => ((globalThis as unknown as { stayed?: boolean }).stayed = true));
      proxy.down();
      await waitFor(async () => (await live.getAttribute('data-state')) === 'reconnecting', {
        what: 'the badge reconnecting',
      });
      expect(await live.innerText()).to.equal('Reconnecting…');
      const sent = await stack.api<{ messageId: string }>('POST', '/send', {
        to: '15550007003',
        text: 'sent while the page was cut off',
      });
      expect(sent.status).to.equal(202);
      await page.waitForTimeout(1000);
      const message = page.getByTestId(`message-${sent.body.messageId}`);
      expect(await message.count()).to.equal(0);
      await screenshots(page, 'messages-reconnecting');
      proxy.up();
      await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
        timeoutMs: 40_000,
        what: 'the stream live again',
      });
      await message.waitFor({ timeout: 10_000 });
      expect(await message.getByTestId('message-text').innerText()).to.equal(
        'sent while the page was cut off',
      );
      expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).to.equal(
        true,
      );
    } finally {
      await proxy.close();
    }
  });
});
