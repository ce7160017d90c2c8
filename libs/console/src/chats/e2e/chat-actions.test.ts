import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { audit } from '../../../test/axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';
import { overflowingInPane as overflowing } from '../../../test/overflow.js';

describe('Dashboard: the inbox’s chat actions — pin, archive, mute and label a chat from the Chats page (chromium, whole stack, simulator)', function () {
  this.timeout(600_000);

  /** What the simulator's phone holds of the account's app state (GET /accounts/:phone/app-state). */
  interface AppStateView {
    labels: Record<string, { name: string; color?: number; deleted?: boolean }>;
    chatLabels: string[];
    chats: Record<string, { archived?: boolean; pinned?: boolean; mutedUntil?: number }>;
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
