/**
 * The dashboard's Chats page, the inbox, in a real browser (Debian's chromium, whole stack,
 * simulator): marking a chat read and replying; the chat actions (pin, archive, mute, label — and
 * the device's Labels tab linking back to the chat); an attachment, a reaction and a group chat's
 * authors; a device's chats and a chat's messages; the page by keyboard (j/k, Enter, r).
 *
 * Each `describe` is one suite as it was when it had a file of its own: its own helpers and its own
 * hooks, run one after the other. They share the mocha worker's one stack and one chromium
 * (useDashboardStack: the stack started by the worker's first dashboard suite and stopped when the
 * worker exits, reset before each suite to what a fresh one shows): each suite has a device, a
 * token, phone numbers and a browser context of its own.
 */
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import { audit } from './axe.js';
import { ADMIN_PASSWORD as PASSWORD, VIEWPORTS, screenshots, useDashboardStack } from './browser.js';
import { overflowing } from './overflow.js';

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

describe('Dashboard: the inbox’s chat actions — pin, archive, mute and label a chat from the Chats page (chromium, whole stack, simulator)', function () {
  this.timeout(600_000);

  /** What the simulator's phone holds of the account's app state (GET /accounts/:phone/app-state). */
  interface AppStateView {
    labels: Record<string, { name: string; color?: number; deleted?: boolean }>;
    chatLabels: string[];
    chats: Record<string, { archived?: boolean; pinned?: boolean; mutedUntil?: number }>;
  }

  /**
   * Elements of `root` that stick out: wider than their box or past `root`'s sides, at both widths
   * (an ellipsis, `text-overflow: ellipsis` with the whole text in its title, is meant to, and so is
   * text for screen readers only).
   */
  async function overflowing(page: Page, root: string): Promise<string[]> {
    const found: string[] = [];
    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      const here = await page.locator(root).evaluateAll((roots) =>
        roots.flatMap((r) => {
          const box = r.getBoundingClientRect();
          return (
            [r, ...r.querySelectorAll('*')]
              .filter((e) => e.getClientRects().length > 0 || e === r)
              // Text for screen readers only is clipped to a pixel on purpose.
              .filter((e) => !e.closest('.visually-hidden'))
              .filter((e) => r.ownerDocument.defaultView!.getComputedStyle(e).textOverflow !== 'ellipsis')
              .filter((e) => {
                const style = r.ownerDocument.defaultView!.getComputedStyle(e);
                // A deliberate scroller (the messages pane) scrolls what it holds.
                const scroller = ['auto', 'scroll'].includes(style.overflowX) || style.overflowY === 'auto';
                const rect = e.getBoundingClientRect();
                return (
                  (!scroller && e.scrollWidth > e.clientWidth + 1) ||
                  rect.left < box.left - 1 ||
                  rect.right > box.right + 1
                );
              })
              .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`)
          );
        }),
      );
      found.push(...here.map((h) => `${label} ${h}`));
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    return found;
  }

  /**
   * Each step's bound (a message reaching /chats, a change reaching the phone or the page): each
   * takes seconds on a quiet machine, but 20 s ran out beside the parallel suite on 2 busy cores
   * (CI's, load 15–20).
   */
  const STEP_MS = 60_000;
  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552800001';
  const [ana, ben] = ['15552800011', '15552800012'];
  const jid = (p: string) => `${p}@s.whatsapp.net`;

  it('When the operator pins, archives, mutes and labels chats, then the list shows each (pinned first, "Archived (1)", the muted icon, the chip), the phone has them, and a change made on the phone shows too', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Actions Shop');
    const view = () => stack.simApi<AppStateView>('GET', `/accounts/${ACCOUNT}/app-state`);
    const write = (from: string, text: string) =>
      stack.simApi('POST', `/contacts/${from}/send`, { to: ACCOUNT, text });
    let listed = '';
    const order = async () =>
      (listed = (await stack.api<{ data: { chats: { id: string }[] } }>('GET', '/chats')).body.data.chats
        .map((c) => c.id)
        .join());
    await write(ana, 'Hello from Ana');
    await waitFor(async () => (await order()) === ana, { timeoutMs: STEP_MS, what: "Ana's chat" });
    await write(ben, 'Hello from Ben');
    // Ben wrote last: his chat is first (until Ana's is pinned).
    // Ben's message may arrive after the second it was stamped in: it still heads the list.
    await waitFor(async () => (await order()) === `${ben},${ana}`, {
      timeoutMs: STEP_MS,
      what: "Ben's chat, then Ana's",
    }).catch((err: Error) => {
      throw new Error(`${err.message} (GET /chats: ${listed})`);
    });
    // The phone shares its app-state key (a real phone does so by itself); a label to put on chats.
    await stack.simApi('POST', `/accounts/${ACCOUNT}/app-state/key-share`);
    let labelId = '';
    await waitFor(
      async () => {
        const r = await stack.api<{ data: { label: { id: string } } }>('POST', '/labels', {
          name: 'VIP',
          color: 5,
        });
        labelId = r.status === 200 ? r.body.data.label.id : '';
        return r.status === 200;
      },
      { timeoutMs: STEP_MS, what: 'the app-state key at the device' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}&chat=${ana}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const rowOf = (p: string) => page.getByTestId(`chat-${p}`);
    await rowOf(ana).waitFor({ timeout: STEP_MS });
    const rows = () =>
      page
        .locator('.chat-list [data-testid^="chat-"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid') ?? ''));
    let seen = '';
    await waitFor(async () => (seen = (await rows()).join()) === `chat-${ben},chat-${ana}`, {
      timeoutMs: STEP_MS,
      what: "Ben's chat first in the list",
    }).catch((err: Error) => {
      throw new Error(`${err.message} (the list: ${seen})`);
    });
    const pane = page.getByRole('region', { name: /Messages of/ });
    const actions = pane.getByRole('group', { name: 'Chat actions' });

    // Pin: Ana's chat moves first, with its marker; the phone has it pinned.
    await actions.getByRole('button', { name: 'Pin', exact: true }).click();
    await rowOf(ana).getByTestId('pinned').waitFor({ timeout: STEP_MS });
    await waitFor(async () => (await rows()).join() === `chat-${ana},chat-${ben}`, {
      timeoutMs: STEP_MS,
      what: "Ana's chat first",
    });
    expect((await view()).chats[jid(ana)]).to.include({ pinned: true });
    await actions.getByRole('button', { name: 'Unpin' }).waitFor();

    // Mute for 8 hours: the icon shows; the phone's mute ends in about 8 hours.
    await actions.getByRole('button', { name: 'Mute ▾' }).click();
    expect(await audit(page, 'inbox-actions-mute-menu')).to.deep.equal([]);
    await actions.getByRole('button', { name: 'For 8 hours' }).click();
    await rowOf(ana).getByTestId('muted').waitFor({ timeout: STEP_MS });
    expect((await view()).chats[jid(ana)]!.mutedUntil).to.be.within(
      Date.now() + 7.9 * 3600_000,
      Date.now() + 8.1 * 3600_000,
    );
    await actions.getByRole('button', { name: 'Unmute' }).waitFor();

    // Label it: the chip shows on the row; the phone has the chat labelled.
    await actions.getByRole('button', { name: 'Labels ▾' }).click();
    await actions.getByRole('checkbox', { name: 'VIP' }).waitFor();
    await screenshots(page, 'inbox-actions-label-menu');
    expect(await audit(page, 'inbox-actions-label-menu')).to.deep.equal([]);
    await actions.getByRole('checkbox', { name: 'VIP' }).check();
    await rowOf(ana).getByTestId(`chip-${labelId}`).waitFor({ timeout: STEP_MS });
    expect((await view()).chatLabels).to.deep.equal([`${labelId}|${jid(ana)}`]);
    await page.keyboard.press('Escape');
    await screenshots(page, 'inbox-actions-pinned-muted-labelled');
    expect(await audit(page, 'inbox-actions')).to.deep.equal([]);
    expect(await overflowing(page, '.chats-layout')).to.deep.equal([]);

    // Archive Ben's chat: it leaves the list, behind "Archived (1)".
    await rowOf(ben).click();
    await pane.getByRole('heading', { name: /\+15552800012/ }).waitFor();
    await actions.getByRole('button', { name: 'Archive', exact: true }).click();
    const archivedToggle = page.getByRole('button', { name: 'Archived (1)' });
    await archivedToggle.waitFor({ timeout: STEP_MS });
    await waitFor(async () => (await rows()).join() === `chat-${ana}`, {
      timeoutMs: STEP_MS,
      what: "only Ana's chat in the list",
    });
    expect((await view()).chats[jid(ben)]).to.include({ archived: true });
    await archivedToggle.click();
    await waitFor(async () => (await rows()).join() === `chat-${ben}`, {
      timeoutMs: STEP_MS,
      what: "Ben's chat among the archived",
    });
    await screenshots(page, 'inbox-actions-archived');
    expect(await overflowing(page, '.chats-layout')).to.deep.equal([]);
    await page.getByRole('button', { name: '← Back to all chats' }).click();

    // The Labels tab lists Ana's chat under VIP, a link to it on the Chats page.
    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/labels`);
    const vip = page.getByTestId(`label-${labelId}`);
    await vip.waitFor({ timeout: STEP_MS });
    expect(await vip.getByRole('cell').nth(2).innerText()).to.equal('1');
    await vip.getByRole('button', { name: /Show chats/ }).click();
    const link = page.getByRole('list', { name: 'Chats labelled VIP' }).getByRole('link');
    expect(await link.getAttribute('href')).to.equal(`/dashboard/chats?device=${stack.deviceId}&chat=${ana}`);
    await link.click();
    await pane.getByRole('heading', { name: /\+15552800011/ }).waitFor({ timeout: STEP_MS });

    // On the phone: Ben's chat unarchived and pinned, Ana's unpinned — the list follows.
    await stack.simApi('POST', `/accounts/${ACCOUNT}/chat-state`, {
      chat: jid(ben),
      archived: false,
      pinned: true,
    });
    await stack.simApi('POST', `/accounts/${ACCOUNT}/chat-state`, { chat: jid(ana), pinned: false });
    await waitFor(async () => (await rows()).join() === `chat-${ben},chat-${ana}`, {
      timeoutMs: STEP_MS,
      what: "Ben's chat back and first (pinned on the phone)",
    });
    await rowOf(ben).getByTestId('pinned').waitFor();
    // Ana's unpin is a change of its own: it may land after Ben's moved him first.
    await waitFor(async () => (await rowOf(ana).getByTestId('pinned').count()) === 0, {
      timeoutMs: STEP_MS,
      what: "Ana's chat unpinned (on the phone)",
    });
    expect(await page.getByRole('button', { name: /Archived/ }).count()).to.equal(0);
    await screenshots(page, 'inbox-actions-phone-change');
  });
});

describe('Dashboard: the inbox answers with an attachment and a reaction, and a group chat names who wrote (chromium, whole stack, simulator)', function () {
  this.timeout(300_000);

  /** A message as the simulator's contact received it (GET /inbox/:phone). */
  interface Arrived {
    id: string;
    type: string;
    caption?: string;
    fileName?: string;
    mimetype?: string;
    fileLength?: number;
    emoji?: string;
    targetId?: string;
  }

  /** A 1×1 PNG. */
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  );

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552910001';
  const [ana, ben] = ['15552910011', '15552910012'];
  let dir = '';

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-compose-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('When the operator attaches an image with a caption, reacts 👍 to the contact’s message and removes it, then the contact gets each; a file over 10 MB is refused before upload; a group bubble names its author', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Compose Shop');
    const arrived = async (who: string, what: string, test: (m: Arrived) => boolean) => {
      let found: Arrived | undefined;
      await waitFor(async () => !!(found = ((await stack.inbox(who)) as Arrived[]).find(test)), {
        timeoutMs: 60_000,
        what,
      });
      return found!;
    };
    const wrote = await stack.simApi<{ id: string }>('POST', `/contacts/${ana}/send`, {
      to: ACCOUNT,
      text: 'Do you have it in blue?',
    });
    const group = await stack.simApi<{ id: string }>('POST', '/groups', {
      subject: 'Shop team',
      members: [ben, ACCOUNT],
    });
    await stack.simApi('POST', `/groups/${group.id}/send`, { from: ben, text: 'Who opens tomorrow?' });
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length >=
        2,
      { timeoutMs: 20_000, what: 'both chats' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}&chat=${ana}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const pane = page.getByRole('region', { name: /Messages of/ });
    const theirs = pane.locator('.bubble-in', { hasText: 'Do you have it in blue?' });
    await theirs.waitFor({ timeout: 15_000 });

    // A file over the limit is refused on the page, saying the limit; nothing is chosen.
    const attach = pane.getByLabel('Attach');
    // From a (sparse) file on disk: a 12 MB buffer travels base64 through the browser's pipe,
    // past 30 s on a loaded machine, where a path is handed to chromium as it is.
    const tour = path.join(dir, 'tour.mp4');
    await writeFile(tour, '');
    await truncate(tour, 12 * 1024 * 1024);
    await attach.setInputFiles(tour);
    await pane.getByText('“tour.mp4” is 12 MB: an attachment may be at most 10 MB.').waitFor();
    expect(await pane.getByTestId('chat-attachment').count()).to.equal(0);

    // Chosen, shown with its size, removed, chosen again.
    const file = path.join(dir, 'blue-jacket.png');
    await writeFile(file, PNG);
    await attach.setInputFiles(file);
    const chip = pane.getByTestId('chat-attachment');
    await chip.waitFor();
    expect(await chip.innerText()).to.match(
      new RegExp(`^image\\s+blue-jacket\\.png\\s+${PNG.length} B`, 'i'),
    );
    expect(await pane.getByText('“tour.mp4”').count(), 'the old refusal gone').to.equal(0);
    await chip.getByRole('button', { name: 'Remove the attachment blue-jacket.png' }).click();
    expect(await chip.count()).to.equal(0);
    expect(await pane.getByLabel('Reply').count()).to.equal(1);
    await attach.setInputFiles(file);
    const caption = pane.getByLabel('Caption (optional)');
    await caption.fill('Here it is in blue');
    await screenshots(page, 'inbox-compose-attachment');
    await pane.getByRole('button', { name: 'Send' }).click();
    await waitFor(async () => (await chip.count()) === 0, { timeoutMs: 15_000, what: 'the file sent' });
    const image = await arrived(ana, 'the image', (m) => m.type === 'image');
    expect(image).to.include({
      caption: 'Here it is in blue',
      fileLength: PNG.length,
      mimetype: 'image/png',
    });
    await pane.locator('.bubble-out', { hasText: 'Here it is in blue' }).waitFor({ timeout: 30_000 });

    // React 👍 to the contact's message: the menu, keyboard reachable and named.
    const react = theirs.getByRole('button', { name: 'React to this message' });
    await react.focus();
    await page.keyboard.press('Enter');
    const menu = theirs.getByRole('group', { name: 'Reactions to choose' });
    await menu.waitFor();
    expect(await menu.getByRole('button').count(), 'six emoji, no "Remove" yet').to.equal(6);
    expect(await audit(page, 'inbox-compose-react-menu')).to.deep.equal([]);
    expect(await overflowing(page)).to.deep.equal([]);
    await screenshots(page, 'inbox-compose-react-menu');
    await page.keyboard.press('Escape');
    expect(await menu.count()).to.equal(0);
    await react.click();
    await menu.getByRole('button', { name: 'React with thumbs up' }).click();
    await arrived(
      ana,
      'the reaction',
      (m) => m.type === 'reaction' && m.emoji === '👍' && m.targetId === wrote.id,
    );
    // Shown on the bubble once recorded (sent: no longer pending).
    const mine = theirs.getByTestId('my-reaction');
    await waitFor(
      async () =>
        (await theirs.getAttribute('data-my-reaction')) === '👍' &&
        (await mine.getAttribute('data-pending')) === null,
      { timeoutMs: 30_000, what: 'the reaction on the bubble' },
    );
    expect(await mine.innerText()).to.include('Your reaction: thumbs up');
    // No bubble of its own.
    expect(await pane.locator('.msg-content[data-kind="reaction"]').count()).to.equal(0);
    await screenshots(page, 'inbox-compose-reacted');

    // Removed: the contact gets "" on the same message, the bubble shows none.
    await react.click();
    await menu.getByRole('button', { name: 'React with thumbs up' }).waitFor();
    expect(
      await menu.getByRole('button', { name: 'React with thumbs up' }).getAttribute('aria-pressed'),
    ).to.equal('true');
    await menu.getByRole('button', { name: 'Remove reaction' }).click();
    await arrived(
      ana,
      'the removal',
      (m) => m.type === 'reaction' && m.emoji === '' && m.targetId === wrote.id,
    );
    await waitFor(async () => (await theirs.getAttribute('data-my-reaction')) === null, {
      timeoutMs: 30_000,
      what: 'the reaction gone from the bubble',
    });
    expect(await mine.count()).to.equal(0);

    // A group chat: the member's message names its author.
    await page.getByTestId(`chat-${group.id}`).click();
    const inGroup = pane.locator('.bubble-in', { hasText: 'Who opens tomorrow?' });
    await inGroup.waitFor({ timeout: 30_000 });
    expect(await inGroup.getByTestId('bubble-author').innerText()).to.equal(`+${ben}`);
    expect(await inGroup.getByRole('button', { name: 'React to this message' }).count()).to.equal(1);
    expect(await overflowing(page)).to.deep.equal([]);
    await screenshots(page, 'inbox-compose-group');
  });
});

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

describe('Dashboard: the Chats page works by keyboard (chromium, whole stack, simulator)', function () {
  this.timeout(180_000);

  /** The focused element and its name: the text of its `<label for>`, else its aria-label or text. */
  const focusedLabel = (page: Page) =>
    page.locator('body').evaluate((body) => {
      const doc = body.ownerDocument;
      const el = doc.activeElement;
      if (!el) return '';
      const label = el.id ? doc.querySelector(`label[for="${el.id}"]`) : null;
      const name = label?.textContent ?? el.getAttribute('aria-label') ?? el.textContent ?? '';
      return `${el.tagName.toLowerCase()}:${name.trim()}`;
    });

  const focusedTestId = (page: Page) =>
    page
      .locator('body')
      .evaluate((body) => body.ownerDocument.activeElement?.getAttribute('data-testid') ?? '');

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552100001';
  const [ana, ben, cy] = ['15552100011', '15552100012', '15552100013'];

  it('When three contacts wrote, then j/ArrowDown move between the rows, Enter opens a chat and r focuses its reply box', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'State Shop');
    const write = (from: string, text: string) =>
      stack.simApi('POST', `/contacts/${from}/send`, { to: ACCOUNT, text });
    await write(ana, 'Hello from Ana');
    await write(ben, 'Hello from Ben');
    await write(cy, 'Hello from Cy');
    await waitFor(
      async () =>
        (await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats.length === 3,
      { timeoutMs: 20_000, what: 'three chats' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId(`chat-${ana}`).waitFor({ timeout: 15_000 });
    // The rows in the page's order (the chats' last activity; three messages a moment apart may
    // come in any order), once the live list has settled.
    const rows = () =>
      page
        .locator('.chat-list [data-testid^="chat-"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid') ?? ''));
    let order: string[] = [];
    await waitFor(
      async () => {
        const seen = await rows();
        const settled = seen.length === 3 && seen.join() === order.join();
        order = seen;
        return settled;
      },
      { timeoutMs: 15_000, intervalMs: 500, what: 'the three rows in a settled order' },
    );
    expect([...order].sort()).to.deep.equal([ana, ben, cy].map((p) => `chat-${p}`).sort());
    const [first, second, third] = order as [string, string, string];
    const writer = { [`chat-${ana}`]: 'Ana', [`chat-${ben}`]: 'Ben', [`chat-${cy}`]: 'Cy' };

    /** The row the focus is on, once the page has handled the key (a busy machine may lag). */
    const focusOn = (id: string, what = 'the focus') =>
      waitFor(async () => (await focusedTestId(page)) === id, {
        timeoutMs: 5_000,
        what: `${what} on ${id}`,
      });
    // Only the keyboard from here: j from the page reaches the first row, then j and ArrowDown move on.
    await page.getByRole('heading', { name: 'Chats', exact: true, level: 1 }).click();
    await page.keyboard.press('j');
    await focusOn(first);
    await page.keyboard.press('j');
    await focusOn(second);
    await page.keyboard.press('ArrowDown');
    await focusOn(third);
    await page.keyboard.press('ArrowDown');
    await focusOn(third, 'the last row staying');
    await page.keyboard.press('k');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowDown');
    await focusOn(second);
    await page.keyboard.press('Enter');
    const pane = page.getByRole('region', { name: /Messages of/ });
    await pane.getByRole('heading', { level: 2 }).waitFor();
    await pane.getByText(`Hello from ${writer[second]}`).waitFor();
    expect(page.url()).to.include(`chat=${second.slice('chat-'.length)}`);
    await focusOn(second, 'the opened row keeping the focus');
    await page.keyboard.press('r');
    expect(await focusedLabel(page)).to.equal('textarea:Reply');
    // Typed in the box, the page's keys are letters: nothing moves, nothing is lost.
    await page.keyboard.type('jkr');
    expect(await pane.getByLabel('Reply').inputValue()).to.equal('jkr');
    expect(await focusedLabel(page)).to.equal('textarea:Reply');
    await screenshots(page, 'chats-keyboard');
  });
});
