/**
 * A console per workspace in a real browser (Debian's chromium, whole stack, simulator): the
 * operator makes workspaces, gives one its users and opens it as its admin; the workspace's admin
 * signs in and sees only its own devices, its usage drawn, and adds and links a device; its agent
 * signs in, is offered no button that changes anything, and answers a chat. Axe and the overflow
 * check at 1366 and 390 px on each new page, and screenshots of them under the artifacts directory.
 *
 * The tests run in order and build on each other (the workspaces and users the first one makes),
 * on the mocha worker's shared stack and chromium (useDashboardStack: a device, a token, phone
 * numbers and a browser context of the suite's own; the workspaces' ids are its own too).
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { keys } from '@mgw/contracts';
import { ADMIN_TOKENS, TokenStore } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, useDashboardStack } from '../../../test/browser.js';
import { sweepPage } from '../../../test/sweep.js';

describe('Dashboard: a console per workspace — the operator, a workspace admin and an agent (chromium, whole stack, simulator)', function () {
  this.timeout(300_000);
  const dashboard = useDashboardStack(this);
  const suffix = Math.random().toString(36).slice(2, 6);
  const acme = `acme-${suffix}`;
  const other = `other-${suffix}`;
  const otherDevice = `other-dev-${suffix}`;
  const admin = { user: `ana.admin-${suffix}`, password: 'ana admin password 1' };
  const agent = { user: `bo.agent-${suffix}`, password: 'bo agent password 22' };
  const ACCOUNT = '15552770001';
  const contact = '15552770011';
  /** The device the admin adds and links (test 2), whose chat the agent answers (test 3). */
  let acmeDevice = '';
  let adminToken = '';

  const h1 = (page: Page, name: string) => page.getByRole('heading', { name, exact: true, level: 1 });
  const main = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  /** Axe and the overflow check at both widths, and the two screenshots, in one pass over the widths. */
  const sweep = async (page: Page, name: string) => {
    const found = await sweepPage(page, name, `workspaces-${name}`);
    expect(found.axe, `axe on ${name}`).to.deep.equal([]);
    expect(found.overflow, `overflow on ${name}`).to.deep.equal([]);
  };
  const signIn = async (page: Page, who: { user?: string; password: string }) => {
    const { stack } = dashboard();
    await page.goto(`${stack.apiUrl}/dashboard`);
    await page.getByLabel('User name').fill(who.user ?? '');
    await page.getByLabel(who.user ? 'Password' : 'Admin password', { exact: true }).fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };
  const signOut = async (page: Page) => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  };
  /** The names of the page's buttons and link-buttons. */
  const buttons = (page: Page) =>
    page
      .locator('main button, main a.button-link, .viewing-banner button')
      .evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()));
  /** What an agent must not be offered: every control that changes something but a chat's answer. */
  const CHANGES =
    /^(Create|Save|Add|Delete|Remove|Revoke|Disconnect|Suspend|Resume|Link|Block|Unblock|Suppress|Rotate|Pause|Cancel|Edit|Make|Reset|Set photo|Show as|Watch|Look up|Retry|Pin|Unpin|Archive|Unarchive|Mute|Unmute|Labels|Leave|Unfollow|Follow|Post|Open as)/;

  before(async () => {
    const { stack } = dashboard();
    adminToken = (await new TokenStore(stack.redis, ADMIN_TOKENS).create({ name: `seed ${suffix}` })).value;
  });

  it('When the operator signs in, creates workspaces, adds an admin and an agent and opens one as its admin, then the whole console is scoped to it until "Back to all workspaces"', async () => {
    const { stack, page } = dashboard();
    // A wrong user name or password: one answer for either, the operator's form unchanged.
    await signIn(page, { user: 'nobody-here', password: 'not the password 1' });
    await page.getByText('That user name or password is not right.').waitFor();
    await page.getByLabel('User name').fill('');
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await h1(page, 'Devices').waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).to.equal('Operator');

    await main(page).getByRole('link', { name: 'Workspaces' }).click();
    await h1(page, 'Workspaces').waitFor();
    const create = page.getByRole('form', { name: 'New workspace' });
    await create.getByLabel('Workspace id').fill(acme);
    await create.getByLabel('Name', { exact: true }).fill('Acme Ltd');
    await create.getByLabel('Devices', { exact: true }).fill('3');
    await create.getByLabel('Messages per day').fill('5000');
    await create.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByText('Workspace “Acme Ltd” created.').waitFor();
    await create.getByLabel('Workspace id').fill(other);
    await create.getByLabel('Name', { exact: true }).fill('Other Co');
    await create.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByText('Workspace “Other Co” created.').waitFor();
    // The other workspace owns a device: acme's people must never see it.
    const given = await stack.adminApi(adminToken, 'PUT', `/workspaces/${other}/devices/${otherDevice}`);
    expect(given.status, JSON.stringify(given.body)).to.equal(200);

    const row = page.getByTestId(`workspace-${acme}`);
    await row.getByText('Active').waitFor();
    expect((await row.getByTestId(`workspace-devices-${acme}`).textContent())?.replace(/\s+/g, ' ')).to.equal(
      '0 / 3',
    );
    await row.getByTestId(`workspace-today-${acme}`).getByText('0 accepted').waitFor();
    await page.getByTestId(`workspace-devices-${other}`).getByText(/^1/).waitFor({ timeout: 20_000 });

    // Edit the quotas: media in MB, the daily quota removed (null).
    await row.getByRole('button', { name: 'Edit Acme Ltd' }).click();
    const edit = page.getByRole('form', { name: `Edit workspace ${acme}` });
    expect(await edit.getByLabel('Workspace id').isDisabled()).to.equal(true);
    expect(await edit.getByLabel('Messages per day').inputValue()).to.equal('5000');
    await edit.getByLabel('Messages per day').fill('');
    await edit.getByLabel('Media stored (MB)').fill('20');
    await edit.getByRole('button', { name: 'Save workspace' }).click();
    await page.getByText('Workspace “Acme Ltd” saved.').waitFor();
    const saved = await stack.adminApi<{ workspace: { quotas: Record<string, number> } }>(
      adminToken,
      'GET',
      `/workspaces/${acme}`,
    );
    expect(saved.body.workspace.quotas).to.deep.equal({ devices: 3, mediaBytes: 20_000_000 });

    // Suspend (after a confirmation) and resume the other one.
    const otherRow = page.getByTestId(`workspace-${other}`);
    await otherRow.getByRole('button', { name: 'Suspend Other Co' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, suspend' }).click();
    await otherRow.getByText('Suspended').waitFor();
    await otherRow.getByRole('button', { name: 'Resume Other Co' }).click();
    await otherRow.getByText('Active').waitFor();
    await sweep(page, 'operator-list');

    // Open acme as its admin: the shell is scoped, and says so on every page.
    await row.getByRole('button', { name: 'Open Acme Ltd as its admin' }).click();
    await h1(page, 'Acme Ltd').waitFor();
    const banner = page.getByRole('region', { name: 'Viewing a workspace' });
    expect((await banner.textContent())?.replace(/\s+/g, ' ')).to.match(/^Viewing Acme Ltd as its admin/);
    expect(await page.getByTestId('signed-in-as').textContent()).to.equal('Operator viewing Acme Ltd');
    expect(await main(page).getByRole('link', { name: 'Workspaces' }).count()).to.equal(0);
    expect(
      await main(page).getByRole('link', { name: 'Workspace', exact: true }).getAttribute('aria-current'),
    ).to.equal('page');

    // Its users: an admin and an agent.
    const users = page.getByTestId('users');
    await users.getByText('No users yet: add the first below.').waitFor();
    const add = page.getByRole('form', { name: 'Add a user' });
    for (const [who, role] of [
      [admin, 'admin'],
      [agent, 'agent'],
    ] as const) {
      await add.getByLabel('User name').fill(who.user);
      await add.getByLabel('Password').fill(who.password);
      await add.getByLabel('Role').selectOption(role);
      await add.getByRole('button', { name: 'Add user' }).click();
      await users
        .getByText(`“${who.user}” added as ${role === 'admin' ? 'an admin' : 'an agent'}.`)
        .waitFor();
      await users.getByTestId(`user-${who.user}`).waitFor();
    }
    // A name already taken: the API's 409, next to the form.
    await add.getByLabel('User name').fill(agent.user);
    await add.getByLabel('Password').fill('another password 333');
    await add.getByRole('button', { name: 'Add user' }).click();
    await add.getByText(/User name is taken/).waitFor();
    await add.getByLabel('User name').fill('');
    await add.getByLabel('Password').fill('');
    expect(
      await users.getByTestId(`user-${agent.user}`).getByText('Agent', { exact: true }).count(),
    ).to.equal(1);
    await sweep(page, 'viewing');

    // Its devices only: neither the other workspace's nor default's.
    await main(page).getByRole('link', { name: 'Devices' }).click();
    await h1(page, 'Devices').waitFor();
    await page.getByText('No devices yet. Add one on the Workspace page, then link it above.').waitFor();
    expect(await page.getByTestId(`device-${otherDevice}`).count()).to.equal(0);
    expect(await page.getByTestId(`device-${stack.deviceId}`).count()).to.equal(0);

    await banner.getByRole('button', { name: 'Back to all workspaces' }).click();
    await h1(page, 'Workspaces').waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).to.equal('Operator');
    expect(await page.getByRole('region', { name: 'Viewing a workspace' }).count()).to.equal(0);
    await signOut(page);
  });

  it("When the workspace's admin signs in, then it sees only its own devices and its usage drawn, and adds a device and links it", async () => {
    const { stack, page } = dashboard();
    await signIn(page, admin);
    await h1(page, 'Acme Ltd').waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).to.equal(`${admin.user} · Acme Ltd (admin)`);
    expect(await page.getByRole('region', { name: 'Viewing a workspace' }).count()).to.equal(0);
    expect(await main(page).getByRole('link', { name: 'Workspaces' }).count()).to.equal(0);

    // Add a device: a random id, then the Devices page ready to link it.
    await page.getByRole('button', { name: 'Add device' }).click();
    await h1(page, 'Devices').waitFor();
    acmeDevice = new URL(page.url()).searchParams.get('link') ?? '';
    expect(acmeDevice).to.match(/^d[0-9a-f]{16}$/);
    expect(await page.getByLabel('Device ID').inputValue()).to.equal(acmeDevice);
    await page.getByTestId(`device-${acmeDevice}`).waitFor();
    expect(await page.getByTestId(`device-${otherDevice}`).count()).to.equal(0);
    expect(await page.getByTestId(`device-${stack.deviceId}`).count()).to.equal(0);
    await page.getByRole('button', { name: 'Link with QR code' }).click();
    const qr = page.getByTestId('qr-code');
    await qr.waitFor();
    await stack.simApi('POST', '/phone/link', {
      qr: await qr.getAttribute('data-qr'),
      phone: ACCOUNT,
      name: 'Acme Shop',
    });
    await page.getByText(`${acmeDevice} is connected`).waitFor({ timeout: 30_000 });
    await page.getByTestId(`device-status-${acmeDevice}`).getByText('Connected').waitFor();

    // Usage over some days of the month (written as the accept and status scripts count it).
    const day = (back: number) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10);
    const seeded: [number, Record<string, number>][] = [
      [0, { accepted: 12, sent: 10, delivered: 8, read: 5, failed: 1 }],
      [3, { accepted: 40, sent: 38, delivered: 35, read: 20, failed: 2 }],
      [9, { accepted: 25, sent: 25, delivered: 24, read: 18, failed: 0 }],
    ];
    for (const [back, counts] of seeded)
      await stack.redis.hset(keys.deviceDayUsage(acmeDevice, day(back)), {
        ...counts,
        ...(counts.failed ? { 'failed:device_disconnected': counts.failed } : {}),
      });
    await main(page).getByRole('link', { name: 'Workspace', exact: true }).click();
    await h1(page, 'Acme Ltd').waitFor();
    const usage = page.getByTestId('usage');
    await usage.getByTestId('usage-chart').waitFor();
    expect(await usage.getByTestId('usage-day').count()).to.equal(30);
    expect(
      await usage.locator(`[data-testid="usage-day"][data-day="${day(3)}"]`).getAttribute('data-accepted'),
    ).to.equal('40');
    expect(
      await usage.locator(`[data-day="${day(3)}"] rect[data-status="read"]`).getAttribute('data-count'),
    ).to.equal('20');
    const totals = usage.getByTestId('usage-totals');
    expect(await totals.locator('[data-status="accepted"]').getAttribute('data-count')).to.equal('77');
    expect(await totals.locator('[data-status="failed"]').getAttribute('data-count')).to.equal('3');
    const table = usage.getByTestId('usage-table');
    expect(await table.locator('tbody tr').count()).to.equal(3);
    expect(await table.locator(`tr[data-day="${day(9)}"] td`).allTextContents()).to.deep.equal([
      '25',
      '25',
      '24',
      '18',
      '0',
    ]);
    // The CSV the link downloads, over the page's session.
    const href = (await usage.getByRole('link', { name: 'Download CSV' }).getAttribute('href')) ?? '';
    const csv = await page.request.get(`${stack.apiUrl}${href}`);
    expect(csv.status()).to.equal(200);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).to.match(/^workspace,day,accepted,otp,sent,delivered,read,failed,received,mediaBytes,/);
    expect(lines).to.have.length(31);
    expect(lines.find((l) => l.startsWith(`${acme},${day(3)},`))).to.match(
      new RegExp(`^${acme},${day(3)},40,0,38,35,20,2,`),
    );

    // Quotas and what is used.
    const quotas = page.getByTestId('quotas');
    expect(await quotas.getByTestId('quota-devices').locator('td').allTextContents()).to.deep.include.members(
      ['1', '3'],
    );
    expect(await quotas.getByTestId('quota-messagesPerDay').locator('td').first().textContent()).to.equal(
      '12',
    );
    expect(await quotas.getByTestId('quota-mediaBytes').locator('td').last().textContent()).to.equal(
      '20.0 MB',
    );
    await page.getByTestId(`ws-device-${acmeDevice}`).getByText('Connected').waitFor();
    await sweep(page, 'admin');
    await signOut(page);
  });

  it('When the agent signs in, then no page offers it a change, and it answers a chat', async () => {
    const { stack, page } = dashboard();
    await stack.simApi('POST', `/contacts/${contact}/send`, { to: ACCOUNT, text: 'Is my order on its way?' });
    await waitFor(
      async () =>
        (
          await stack.adminApi<{ chats?: { id: string }[] }>(
            adminToken,
            'GET',
            `/devices/${acmeDevice}/chats`,
          )
        ).body.chats?.some((c) => c.id === contact) ?? false,
      { timeoutMs: 20_000, what: 'the chat' },
    );

    await signIn(page, agent);
    await h1(page, 'Acme Ltd').waitFor();
    expect(await page.getByTestId('signed-in-as').textContent()).to.equal(`${agent.user} · Acme Ltd (agent)`);
    // The workspace read-only: its usage drawn, no users (the admins' to know).
    await page.getByTestId('usage').getByTestId('usage-chart').waitFor();
    expect(await page.getByTestId('users').count()).to.equal(0);
    await page.getByTestId(`ws-device-${acmeDevice}`).waitFor();
    const offered: string[] = [];
    const look = async (path: string, heading: string, ready?: string) => {
      await page.goto(`${stack.apiUrl}${path}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      if (ready) await page.getByText(ready).first().waitFor();
      // Loaded sections (a spinner gone) before their buttons are read.
      await waitFor(async () => (await page.locator('.loading').count()) === 0, {
        timeoutMs: 20_000,
        what: `${path} loaded`,
      });
      offered.push(...(await buttons(page)).filter((b) => CHANGES.test(b)).map((b) => `${path}: ${b}`));
    };
    await look('/dashboard/workspace', 'Acme Ltd', 'Usage, last 30 days');
    // The check reads the page's controls: what is read-only is there.
    expect(await buttons(page)).to.include('Download CSV');
    await sweep(page, 'agent');
    await look('/dashboard/devices', 'Devices', acmeDevice);
    expect(await page.getByRole('heading', { name: 'Link a device' }).count()).to.equal(0);
    await look('/dashboard/pools', 'Pools');
    await look('/dashboard/settings/api', 'Settings');
    await look(`/dashboard/batches?device=${acmeDevice}`, 'Batches');
    await look(`/dashboard/devices/${acmeDevice}`, `Settings of ${acmeDevice}`, 'Sending policy');
    for (const tab of ['Groups', 'Labels', 'Statuses', 'Channels', 'Events'])
      await look(`/dashboard/devices/${acmeDevice}/${tab.toLowerCase()}`, `${tab} of ${acmeDevice}`);
    expect(offered).to.deep.equal([]);

    // The chat: the reply box is there (answering is the agent's job), the chat's settings are not.
    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${acmeDevice}&chat=${contact}`);
    const pane = page.getByRole('region', { name: /Messages of/ });
    await pane.getByText('Is my order on its way?').waitFor({ timeout: 20_000 });
    for (const name of ['Pin', 'Archive', 'Mute', 'Labels'])
      expect(await pane.getByRole('button', { name, exact: true }).count(), name).to.equal(0);
    const box = pane.getByLabel('Reply');
    await box.fill('Yes: it left this morning.');
    await box.press('Enter');
    await waitFor(
      async () => (await stack.inbox(contact)).some((m) => m.text === 'Yes: it left this morning.'),
      {
        timeoutMs: 30_000,
        what: 'the contact gets the reply',
      },
    );
    await pane.locator('.bubble-out', { hasText: 'it left this morning' }).waitFor({ timeout: 15_000 });
    await sweep(page, 'agent-chat');
    // The server refuses an agent's change anyway: 403, the role named.
    const refused = await page.evaluate(async () => {
      const session = (await (await fetch('/api/admin/v1/session')).json()) as { csrfToken: string };
      const r = await fetch('/api/admin/v1/pools', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
        body: JSON.stringify({ id: 'agents-pool', name: 'No', devices: [] }),
      });
      return { status: r.status, body: (await r.json()) as { error?: string } };
    });
    expect(refused).to.deep.equal({
      status: 403,
      body: { success: false, error: 'Your role cannot do this' },
    });
    await signOut(page);
  });
});
