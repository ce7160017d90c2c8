/**
 * A device's tabs on the dashboard in a real browser (Debian's chromium, whole stack, simulator):
 * Groups (create, rename, members, invite link, join, leave), Labels (create, rename, recolour,
 * delete), Statuses and Channels (post a status and see who viewed it, a scheduled status, a
 * channel created and posted to) and Events (the webhook's log, failures and retries, with the
 * notifier).
 *
 * Each `describe` is one suite as it was when it had a file of its own: its own helpers and its own
 * hooks, run one after the other. They share the mocha worker's one stack and one chromium
 * (useDashboardStack: the stack started by the worker's first dashboard suite and stopped when the
 * worker exits, reset before each suite to what a fresh one shows): each suite has a device, a
 * token, phone numbers and a browser context of its own.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { WebhookReceiver, waitFor, type Stack } from '@mgw/testing';
import { audit } from './axe.js';
import { ADMIN_PASSWORD as PASSWORD, VIEWPORTS, screenshots, useDashboardStack } from './browser.js';

describe('Dashboard: a device’s Groups tab — create, rename, members, invite link, join, leave (chromium, whole stack, simulator)', function () {
  this.timeout(240_000);

  interface SimGroupView {
    id: string;
    subject: string;
    description?: string;
    participants: { phone: string; role: string }[];
  }

  /**
   * Elements of `root` that stick out: wider than their box (scrollWidth past clientWidth) or past
   * `root`'s sides, at both widths. Three kinds are meant to: what is inside a `.table-scroll` (a
   * wide table scrolls sideways in it), an ellipsis (`text-overflow: ellipsis`, the whole text in its
   * title) and text for screen readers only (`.visually-hidden`).
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
              .filter((e) => !e.parentElement?.closest('.table-scroll') || e === r)
              .filter((e) => r.ownerDocument.defaultView!.getComputedStyle(e).textOverflow !== 'ellipsis')
              // Text for screen readers only, clipped to 1 px on purpose.
              .filter((e) => !e.closest('.visually-hidden'))
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
      found.push(...here.map((h) => `${label} ${h}`));
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    return found;
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552720001';
  const [ana, ben, cai] = ['15552720011', '15552720012', '15552720013'];

  it('When the operator creates a group from the page, renames it, adds and removes a member, copies the invite link, joins another by link and leaves one, then the simulator’s groups follow each step', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Groups Shop');
    for (const [phone, name] of [
      [ana, 'Ana'],
      [ben, 'Ben'],
      [cai, 'Cai'],
    ])
      await stack.simApi('POST', '/contacts', { phone, name });
    const simGroup = (id: string) => stack.simApi<SimGroupView>('GET', `/groups/${id}`);
    const phonesOf = async (id: string) => (await simGroup(id)).participants.map((p) => p.phone).sort();

    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.apiUrl });
    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/groups`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Groups', exact: true }).waitFor();
    expect(
      await page.getByRole('link', { name: 'Groups', exact: true }).getAttribute('aria-current'),
    ).to.equal('page');
    await page.getByText('This account is in no group yet').waitFor({ timeout: 30_000 });
    await screenshots(page, 'groups-empty');
    expect(await audit(page, 'groups-empty')).to.deep.equal([]);

    // Create a group with two contacts: the page opens it.
    await page.getByLabel('Subject', { exact: true }).fill('Launch crew');
    await page.getByLabel('Members', { exact: true }).fill(`+${ana}\n${ben}`);
    await page.getByRole('button', { name: 'Create group' }).click();
    const detail = page.getByTestId('group-detail');
    await detail.getByRole('heading', { name: 'Launch crew' }).waitFor({ timeout: 30_000 });
    const gid = new URL(page.url()).searchParams.get('group')!;
    expect(gid).to.match(/@g\.us$/);
    expect(await phonesOf(gid)).to.deep.equal([ACCOUNT, ana, ben].sort());
    expect((await simGroup(gid)).participants.find((p) => p.phone === ACCOUNT)?.role).to.equal('superadmin');
    await page.getByTestId(`member-${ACCOUNT}`).getByText('You').waitFor();

    // Rename it (a subject of either script) and describe it.
    const subject = 'Launch crew · فريق الإطلاق';
    await detail.getByLabel('Subject', { exact: true }).fill(subject);
    await detail.getByLabel('Description', { exact: true }).fill('Release night, 8 pm');
    await detail.getByRole('button', { name: 'Save changes' }).click();
    await detail.getByText('Saved: the members see the change.').waitFor({ timeout: 30_000 });
    expect(await simGroup(gid)).to.include({ subject, description: 'Release night, 8 pm' });
    await detail.getByRole('heading', { name: subject }).waitFor();

    // Add a member, then remove another (after the Confirm).
    await detail.getByLabel('Add members').fill(cai);
    await detail.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByTestId('member-outcomes').getByText('added').waitFor({ timeout: 30_000 });
    await page.getByTestId(`member-${cai}`).waitFor({ timeout: 15_000 });
    expect(await phonesOf(gid)).to.include(cai);
    await detail.getByRole('button', { name: `Remove +${ben}` }).click();
    const removeDialog = page.getByRole('dialog', { name: 'Remove this member?' });
    await removeDialog.waitFor();
    expect(await audit(page, 'groups-remove-dialog')).to.deep.equal([]);
    await removeDialog.getByRole('button', { name: 'Remove' }).click();
    await page.getByTestId(`member-${ben}`).waitFor({ state: 'detached', timeout: 30_000 });
    expect(await phonesOf(gid)).to.deep.equal([ACCOUNT, ana, cai].sort());
    // Make Ana an admin: the simulator's group says so.
    await detail.getByRole('button', { name: `Make admin +${ana}` }).click();
    await detail.getByRole('button', { name: `Demote +${ana}` }).waitFor({ timeout: 30_000 });
    expect((await simGroup(gid)).participants.find((p) => p.phone === ana)?.role).to.equal('admin');

    // The invite link: shown, the same as the public API's, copied.
    await detail.getByRole('button', { name: 'Show invite link' }).click();
    const shown = await page.getByTestId('invite-link').innerText();
    const invite = await stack.api<{ data: { invite: { link: string; code: string } } }>(
      'GET',
      `/groups/${gid}/invite`,
    );
    expect(shown).to.equal(invite.body.data.invite.link);
    await detail.getByRole('button', { name: 'Copy link' }).click();
    await detail.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal(shown);
    // A contact joins by it.
    await stack.simApi('POST', '/groups/join', { phone: ben, code: invite.body.data.invite.code });
    expect(await phonesOf(gid)).to.include(ben);
    // The page hears of it (a group.updated event) and reads the group again.
    await page.getByTestId(`member-${ben}`).waitFor({ timeout: 30_000 });
    await screenshots(page, 'groups-detail');
    expect(await audit(page, 'groups-detail')).to.deep.equal([]);
    expect(await overflowing(page, '.groups-page, .group-detail')).to.deep.equal([]);

    // Revoke it (after the Confirm): a new link, the old code no longer works.
    await detail.getByRole('button', { name: 'Revoke link' }).click();
    const revokeDialog = page.getByRole('dialog', { name: 'Revoke the invite link?' });
    await revokeDialog.waitFor();
    expect(await audit(page, 'groups-revoke-dialog')).to.deep.equal([]);
    await revokeDialog.getByRole('button', { name: 'Revoke link' }).click();
    await detail.getByText('A new link replaces the old one').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('invite-link').innerText()).not.to.equal(shown);
    let refused = '';
    await stack
      .simApi('POST', '/groups/join', { phone: '15552720014', code: invite.body.data.invite.code })
      .catch((err: Error) => (refused = err.message));
    expect(refused).to.include('410');

    // Back to the list: the group is there, its subject whole.
    await detail.getByRole('button', { name: '← All groups' }).click();
    const row = page.getByTestId(`group-${gid}`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.innerText()).to.include(subject);

    // Join someone else's group by its link: the page opens it (the account a plain member there).
    const theirs = await stack.simApi<SimGroupView>('POST', '/groups', {
      subject: 'Their club',
      members: [ana, cai],
    });
    const link = await stack.simApi<{ code: string }>('POST', `/groups/${theirs.id}/invite`, { by: ana });
    await page.getByLabel('Invite link or code').fill(`https://chat.whatsapp.com/${link.code}`);
    await page.getByRole('button', { name: 'Join group' }).click();
    await detail.getByRole('heading', { name: 'Their club' }).waitFor({ timeout: 30_000 });
    expect(await phonesOf(theirs.id)).to.include(ACCOUNT);
    await page.getByTestId('invite-not-admin').waitFor();
    await page.getByTestId('members-not-admin').waitFor();
    await screenshots(page, 'groups-member-view');
    expect(await audit(page, 'groups-member-view')).to.deep.equal([]);

    // Leave it (after the Confirm): back on the list, without it.
    await detail.getByRole('button', { name: 'Leave group' }).click();
    const leaveDialog = page.getByRole('dialog', { name: 'Leave this group?' });
    await leaveDialog.waitFor();
    expect(await audit(page, 'groups-leave-dialog')).to.deep.equal([]);
    await screenshots(page, 'groups-leave-dialog');
    await leaveDialog.getByRole('button', { name: 'Leave group' }).click();
    await page.getByText('The account left').waitFor({ timeout: 30_000 });
    expect(await phonesOf(theirs.id)).not.to.include(ACCOUNT);
    await waitFor(async () => (await page.getByTestId(`group-${theirs.id}`).count()) === 0, {
      timeoutMs: 30_000,
      what: 'the left group gone from the list',
    });
    await row.waitFor();
    await screenshots(page, 'groups-list');
    expect(await audit(page, 'groups-list')).to.deep.equal([]);
    expect(await overflowing(page, '.groups-page, .group-detail')).to.deep.equal([]);
  });
});

describe('Dashboard: the Labels tab — create, rename, recolour and delete the account’s labels (chromium, whole stack, simulator)', function () {
  this.timeout(240_000);

  /** What the simulator's phone holds of the account's labels (GET /accounts/:phone/app-state). */
  interface AppStateView {
    labels: Record<string, { name: string; color?: number; deleted?: boolean }>;
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

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552900001';

  it('When the operator creates, edits and deletes a label, then the tab lists it with its colour’s name, the phone has each change, and a label made on the phone shows', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Labels Shop');
    const view = () => stack.simApi<AppStateView>('GET', `/accounts/${ACCOUNT}/app-state`);

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/labels`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No labels yet').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('link', { name: 'Labels' }).getAttribute('aria-current')).to.equal('page');
    await screenshots(page, 'labels-empty');

    // Before the phone shared its app-state key, a create is refused with the reason.
    await page.getByLabel('New label').fill('VIP');
    await page.getByLabel('Colour').selectOption({ label: 'Sea green' });
    await page.getByRole('button', { name: 'Create' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /app-state key/ })
      .waitFor({ timeout: 40_000 });

    await stack.simApi('POST', `/accounts/${ACCOUNT}/app-state/key-share`);
    // The key reaches the device moments later: a label made and deleted through the public API says so.
    await waitFor(
      async () => {
        const probe = await stack.api<{ data: { label: { id: string } } }>('POST', '/labels', {
          name: 'Probe',
        });
        if (probe.status !== 200) return false;
        expect((await stack.api('DELETE', `/labels/${probe.body.data.label.id}`)).status).to.equal(200);
        return true;
      },
      { timeoutMs: 30_000, what: 'the app-state key at the device' },
    );
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').filter({ hasText: 'Label “VIP” created.' }).waitFor({ timeout: 40_000 });
    const id = Object.entries((await view()).labels).find(([, l]) => l.name === 'VIP')?.[0] ?? '';
    expect((await view()).labels[id]).to.deep.include({ name: 'VIP', color: 5 });
    const row = page.getByTestId(`label-${id}`);
    await row.waitFor({ timeout: 20_000 });
    expect(await row.getByRole('cell').nth(1).innerText()).to.equal('Sea green');
    expect(await row.getByRole('cell').nth(2).innerText()).to.equal('0');

    // Rename and recolour in the dialog.
    await row.getByRole('button', { name: 'Edit VIP' }).click();
    const dialog = page.getByRole('dialog', { name: /Edit the label/ });
    await dialog.waitFor();
    expect(await audit(page, 'labels-edit-dialog')).to.deep.equal([]);
    await screenshots(page, 'labels-edit-dialog');
    await dialog.getByLabel('Name').fill('عملاء VIP');
    await dialog.getByLabel('Colour').selectOption({ label: 'Violet' });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached', timeout: 40_000 });
    await waitFor(async () => (await view()).labels[id]?.name === 'عملاء VIP', {
      timeoutMs: 20_000,
      what: 'the phone has the new name',
    });
    expect((await view()).labels[id]).to.deep.include({ color: 8 });
    await waitFor(async () => (await row.getByRole('cell').nth(1).innerText()) === 'Violet', {
      timeoutMs: 20_000,
      what: 'the new colour listed',
    });

    // A label made on the phone shows (the live label.edited event).
    await stack.simApi('POST', `/accounts/${ACCOUNT}/labels`, {
      id: '77',
      name: 'Made on the phone',
      color: 1,
    });
    await page.getByTestId('label-77').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('label-77').getByRole('cell').nth(1).innerText()).to.equal('Sky blue');
    await row.getByRole('button', { name: /Show chats/ }).click();
    await page.getByText('No chat carries this label').waitFor({ timeout: 15_000 });
    await screenshots(page, 'labels-list');
    expect(await audit(page, 'labels-page')).to.deep.equal([]);
    expect(await overflowing(page, '[data-testid="labels"]')).to.deep.equal([]);

    // Delete, confirmed: it leaves the list and the phone has it deleted.
    await page.getByTestId('label-77').getByRole('button', { name: 'Delete Made on the phone' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete the label?' });
    await confirm.waitFor();
    expect(await audit(page, 'labels-delete-confirm')).to.deep.equal([]);
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('label-77').waitFor({ state: 'detached', timeout: 40_000 });
    expect((await view()).labels['77']).to.deep.include({ deleted: true });
    expect(await page.getByTestId(`label-${id}`).count()).to.equal(1);
  });
});

describe('Dashboard: a device’s Statuses and Channels tabs — post a status and see who viewed it, contacts’ statuses, a channel created and posted to (chromium, whole stack, simulator)', function () {
  this.timeout(300_000);

  interface SimStatus {
    id: string;
    poster: string;
    text?: string;
    audience: string[];
    readBy: string[];
    deleted?: true;
  }

  /**
   * Elements of `root` that stick out: wider than their box (scrollWidth past clientWidth) or past
   * `root`'s sides, at both widths — but what is inside a `.table-scroll`, an ellipsis (the whole
   * text in its title) and a screen-reader-only name, which are meant to.
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
              .filter((e) => !e.parentElement?.closest('.table-scroll') || e === r)
              .filter((e) => r.ownerDocument.defaultView!.getComputedStyle(e).textOverflow !== 'ellipsis')
              // A name for screen readers only (a column of buttons' "Actions"): clipped to 1 px on purpose.
              .filter((e) => !e.closest('.visually-hidden'))
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
      found.push(...here.map((h) => `${label} ${h}`));
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    return found;
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552730001';
  const [ana, ben] = ['15552730011', '15552730012'];

  const simStatuses = (s: Stack) =>
    s.simApi<{ statuses: SimStatus[] }>('GET', `/statuses/${ACCOUNT}`).then((r) => r.statuses);

  it('When the operator posts a status from the Statuses tab, then the contacts receive it, a view shows its viewer on the page, a contact’s own status shows, and the delete reaches them', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Status Shop');
    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/statuses`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Post a status' }).waitFor({ timeout: 15_000 });
    await page.getByText('No status in the last 24 hours').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('link', { name: 'Statuses' }).getAttribute('aria-current')).to.equal('page');
    expect(await audit(page, 'statuses-empty')).to.deep.equal([]);

    await page.getByLabel('Status text').fill('Open until 20:00 today');
    await page.getByLabel('Font').selectOption('calistoga');
    await page.getByLabel(/Viewers' numbers/).fill(`+${ana}, ${ben}`);
    await page.getByRole('button', { name: 'Post status' }).click();
    await page.getByText('Status queued for 2 viewers.').waitFor({ timeout: 15_000 });

    // The contacts' phones decrypt it.
    let received: SimStatus | undefined;
    await waitFor(
      async () =>
        (received = (await simStatuses(stack)).find((s) => s.text === 'Open until 20:00 today'))?.readBy
          .length === 2,
      { timeoutMs: 60_000, what: 'both contacts get the status' },
    );
    expect(received!.audience).to.have.members([ana, ben]);

    // Ana opens it: the page shows her as its viewer.
    await stack.simApi('POST', `/statuses/${received!.id}/view`, { viewers: [ana] });
    const row = page.getByTestId(/^status-row-/).filter({ hasText: 'Open until 20:00 today' });
    await row.getByText('1 of 2 viewed').waitFor({ timeout: 30_000 });
    await row.getByRole('list', { name: 'Viewed by' }).getByText(`+${ana}`).waitFor();
    expect(await row.getByText('Sent', { exact: true }).count()).to.equal(1);

    // A contact's own status, once the device takes them.
    await page.getByLabel(/Receive contacts' statuses/).check();
    await waitFor(
      async () =>
        (await stack.api<{ data: { receiveStatuses: boolean } }>('GET', '/statuses/settings')).body.data
          .receiveStatuses,
      { timeoutMs: 10_000, what: 'the setting saved' },
    );
    await stack.simApi('POST', `/contacts/${ben}/status`, { text: 'Back from holidays', viewers: [ACCOUNT] });
    const theirs = page.getByTestId('contact-status').filter({ hasText: 'Back from holidays' });
    await theirs.waitFor({ timeout: 30_000 });
    expect(await theirs.innerText()).to.include(`+${ben}`);

    await screenshots(page, 'statuses-page');
    expect(await overflowing(page, '.statuses-page')).to.deep.equal([]);
    expect(await audit(page, 'statuses-page')).to.deep.equal([]);

    // Delete: a Confirm dialog, then the revoke reaches the contacts.
    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this status?' });
    await dialog.waitFor();
    expect(await audit(page, 'statuses-delete-dialog')).to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Delete status' }).click();
    await page.getByText('Deleting: the revoke goes').waitFor({ timeout: 15_000 });
    await waitFor(
      async () => (await simStatuses(stack)).find((s) => s.id === received!.id)?.deleted === true,
      {
        timeoutMs: 60_000,
        what: 'the contacts see it deleted',
      },
    );
  });

  it('When a status is scheduled from the page, then it is listed as scheduled and nothing reaches the contacts', async () => {
    const { stack, page } = dashboard();
    await page.getByLabel('Picture', { exact: true }).check();
    await page.getByLabel('Picture URL').fill('https://example.com/menu.jpg');
    await page.getByLabel('Caption (optional)').fill('Tomorrow’s menu');
    await page.getByLabel(/Viewers' numbers/).fill(ana);
    await page.getByLabel('Later').check();
    // Two days ahead, as the datetime field takes it (local time, to the minute).
    const due = new Date(Date.now() + 2 * 86_400_000);
    const local = new Date(due.getTime() - due.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.getByLabel('Send at (your local time)').fill(local);
    await page.getByRole('button', { name: 'Schedule status' }).click();
    await page.getByText(/Status scheduled for/).waitFor({ timeout: 15_000 });
    const listed = await stack.api<{
      data: { statuses: { status: string; kind: string; sendAt?: string }[] };
    }>('GET', '/statuses');
    const scheduled = listed.body.data.statuses.find((s) => s.status === 'scheduled');
    expect(scheduled).to.deep.include({ kind: 'image' });
    expect(Math.abs(Date.parse(scheduled!.sendAt!) - due.getTime())).to.be.below(60_000);
    await page
      .getByTestId(/^status-row-/)
      .filter({ hasText: 'Tomorrow’s menu' })
      .getByText('Scheduled')
      .waitFor({
        timeout: 15_000,
      });
    expect((await simStatuses(stack)).some((s) => s.text === 'Tomorrow’s menu')).to.equal(false);
  });

  it('When the operator creates a channel from the Channels tab and posts to it, then the simulator has the channel and the post, and the page lists the post', async () => {
    const { stack, page } = dashboard();
    await page.getByRole('link', { name: 'Channels' }).click();
    await page.getByRole('heading', { name: 'Create a channel' }).waitFor({ timeout: 15_000 });
    await page.getByText('No channel yet').waitFor({ timeout: 15_000 });
    expect(await audit(page, 'channels-empty')).to.deep.equal([]);

    const create = page.getByRole('region', { name: 'Create a channel' });
    await create.getByLabel('Name').fill('Spring Sale News');
    await create.getByLabel('Description (optional)').fill('Offers every Monday');
    await create.getByRole('button', { name: 'Create channel' }).click();
    await page.getByText('Channel "Spring Sale News" created.').waitFor({ timeout: 30_000 });
    const listed = await stack.api<{ data: { channels: { id: string; role: string }[] } }>(
      'GET',
      '/channels',
    );
    const channelId = listed.body.data.channels[0]!.id;
    expect(listed.body.data.channels[0]!.role).to.equal('owner');
    const sim = await stack.simApi<{ owner: string; name: string }>('GET', `/newsletters/${channelId}`);
    expect(sim).to.include({ owner: ACCOUNT, name: 'Spring Sale News' });
    const row = page.getByTestId(`channel-${channelId}`);
    await row.getByText('Owner').waitFor();
    await row.getByRole('cell', { name: '0', exact: true }).waitFor({ timeout: 15_000 });

    const panel = page.getByTestId('channel-panel');
    await panel.getByRole('heading', { name: 'Post to the channel' }).waitFor({ timeout: 30_000 });
    await panel.getByLabel('Text', { exact: true }).fill('Doors open at 9');
    await panel.getByRole('button', { name: 'Post', exact: true }).click();
    await waitFor(
      async () =>
        (
          await stack.simApi<{ posts: { text?: string }[] }>('GET', `/newsletters/${channelId}/posts`)
        ).posts.some((p) => p.text === 'Doors open at 9'),
      { timeoutMs: 60_000, what: 'the post in the channel' },
    );
    const post = panel.getByTestId('channel-posts').getByRole('row').filter({ hasText: 'Doors open at 9' });
    await post.waitFor({ timeout: 30_000 });
    expect(await post.getByRole('cell').nth(2).innerText()).to.equal('0');

    await screenshots(page, 'channels-page');
    expect(await overflowing(page, '.channels-page')).to.deep.equal([]);
    expect(await audit(page, 'channels-page')).to.deep.equal([]);

    // Deleting asks first (the dialog is audited), then the channel is gone from WhatsApp.
    await panel.getByRole('button', { name: 'Delete channel' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Spring Sale News?' });
    await dialog.waitFor();
    expect(await audit(page, 'channels-delete-dialog')).to.deep.equal([]);
    await dialog.getByRole('button', { name: 'Delete channel' }).click();
    await page.getByText('No channel yet').waitFor({ timeout: 30_000 });
    const gone = await stack.api('GET', `/channels/${channelId}`);
    expect(gone.status).to.equal(404);
  });
});

describe("Dashboard: a device's Events tab in a real browser (chromium, whole stack with the notifier)", function () {
  this.timeout(150_000);

  /**
   * Elements of `root` that stick out (wider than their box, or past `root`'s sides) at both widths.
   * The payload's `<pre>` scrolls sideways on purpose (what is in it is not checked) and
   * `.visually-hidden` text is for screen readers only.
   */
  async function overflowing(page: Page, root: string): Promise<string[]> {
    const found: string[] = [];
    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      const here = await page.locator(root).evaluateAll((roots) =>
        roots.flatMap((r) => {
          const box = r.getBoundingClientRect();
          return [r, ...r.querySelectorAll('*')]
            .filter((e) => e.getClientRects().length > 0 || e === r)
            .filter((e) => !e.parentElement?.closest('.event-json') && !e.closest('.visually-hidden'))
            .filter((e) => {
              const rect = e.getBoundingClientRect();
              const scroller = e.classList.contains('event-json');
              return (
                (!scroller && e.scrollWidth > e.clientWidth + 1) ||
                rect.left < box.left - 1 ||
                rect.right > box.right + 1
              );
            })
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`);
        }),
      );
      found.push(...here.map((h) => `${label} ${h}`));
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    return found;
  }

  const ctx = useDashboardStack(this);
  let receiver: WebhookReceiver | undefined;
  after(async () => receiver?.close());

  it("When the device's webhook refuses its events, then the tab shows the log, the failure and the waiting retries, and Retry now delivers them", async () => {
    const { stack, page } = ctx();
    receiver = await WebhookReceiver.startFor(stack);
    let refusing = true;
    receiver.respond = () => (refusing ? 500 : 204);
    await stack.linkByQr('15550620001', 'Events Tab Account');
    const retries = `mgw:{${stack.deviceId}}:webhook:retries`;
    await waitFor(async () => (await stack.redis.zcard(retries)) >= 2, {
      timeoutMs: 30_000,
      what: 'both session events waiting for a retry',
    });
    const refused = receiver.deliveries.map((d) => d.id);

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/events`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: `Events of ${stack.deviceId}` }).waitFor();
    expect(await page.getByRole('link', { name: 'Events' }).getAttribute('aria-current')).to.equal('page');

    // The webhook: its URL, the refusal, two retries two minutes away, nothing dropped.
    const hook = page.getByTestId('outlet-webhook');
    expect(await hook.getByTestId('webhook-url').textContent()).to.equal(receiver.url);
    await hook.getByTestId('webhook-last-failure').getByText('HTTP 500').waitFor();
    const fact = (id: string) => hook.getByTestId(id).locator('dd');
    expect(await fact('webhook-last-delivery').textContent()).to.equal('none yet');
    expect(await fact('webhook-retries').textContent()).to.match(/^2 · next in [12] min$/);
    expect(await fact('webhook-exhausted').textContent()).to.equal('0');
    await page.getByTestId('outlet-rabbitmq').getByText('Not configured').waitFor();

    // The log, newest first: connected before connecting, each with its payload on demand.
    const log = page.getByTestId('event-log');
    await waitFor(async () => (await log.getByTestId('event-row').count()) >= 2, { what: 'two rows' });
    const first = log.getByTestId('event-row').first();
    expect(await first.locator('.event-type').textContent()).to.equal('session.status');
    expect(await first.locator('.event-summary').textContent()).to.include('connected');
    await first.locator('summary').click();
    const json = await first.locator('.event-json').textContent();
    expect(JSON.parse(json ?? '{}')).to.include({ deviceId: stack.deviceId, status: 'connected' });
    expect(await first.getAttribute('data-event-id')).to.be.oneOf(refused);

    await screenshots(page, 'device-events-failing');
    expect(await audit(page, 'device events (failing webhook)')).to.deep.equal([]);
    expect(await overflowing(page, '.device-events')).to.deep.equal([]);

    // Retry now, through the button: both go out at once, with the webhook-ids of their refusals.
    refusing = false;
    const queued = await stack.redis.zrange(retries, 0, -1);
    await hook.getByRole('button', { name: 'Retry now' }).click();
    await hook.getByText('2 events are due now: the notifier delivers them in order.').waitFor();
    await waitFor(() => receiver!.accepted().length === 2, { timeoutMs: 20_000, what: 'both delivered' });
    expect(receiver.accepted().map((d) => d.id)).to.deep.equal(queued);
    await hook.getByTestId('webhook-last-delivery').getByText('HTTP 204').waitFor({ timeout: 15_000 });
    await waitFor(async () => (await fact('webhook-retries').textContent()) === '0', {
      timeoutMs: 15_000,
      what: 'no retry left on the page',
    });
    expect(await hook.getByRole('button', { name: 'Retry now' }).isDisabled()).to.equal(true);

    // A type filter with nothing to show says what to do.
    await log.getByLabel('Type').selectOption('message.failed');
    await log.getByText('No message.failed event in the log.', { exact: false }).waitFor();
    await log.getByLabel('Type').selectOption('session.status');
    await waitFor(async () => (await log.getByTestId('event-row').count()) >= 2, { what: 'filtered rows' });

    await screenshots(page, 'device-events-delivered');
    expect(await audit(page, 'device events (delivered)')).to.deep.equal([]);
    expect(await overflowing(page, '.device-events')).to.deep.equal([]);
  });
});
