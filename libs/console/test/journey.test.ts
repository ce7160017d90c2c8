import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { EVENT_TYPES, keys } from '@mgw/contracts';
import { clearRestriction, markRestricted, recordHealthSignal } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { WEBHOOK_EVENTS } from '../src/kit/events.js';
import { ADMIN_PASSWORD as PASSWORD, VIEWPORTS, screenshots, useDashboardStack } from './browser.js';

/** The simulated phone the linking panel's sandbox command links (the README's sandbox account). */
const ACCOUNT = '15550000001';
const PAGES = ['/dashboard', '/dashboard/devices', '/dashboard/settings/api', '/dashboard/messages'];

describe('Dashboard in a real browser (chromium, whole stack against the simulator)', function () {
  this.timeout(90_000);
  let page: Page;
  const deviceId = `dash-${Math.random().toString(36).slice(2, 7)}`;
  let tokenValue = '';
  const requested: string[] = [];

  // A webhook receiver on 127.0.0.1 (the outbound guard lets it through by ALLOWED_PRIVATE_HOSTS).
  let receiver: Server;
  let receiverUrl = '';

  // The stack lets webhooks reach 127.0.0.1 (ALLOWED_PRIVATE_HOSTS), as this suite's receiver is.
  const dashboard = useDashboardStack(this);
  const stack = () => dashboard().stack;
  before(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/dashboard`;
    // Everything the pages load must come from the gateway itself (no CDN, nothing from WhatsApp).
    dashboard().context.on('request', (r) => requested.push(r.url()));
    page = dashboard().page;
  });
  after(async () => {
    receiver?.close();
  });

  const publicApi = (p: string, token: string, method = 'GET') =>
    fetch(`${stack().apiUrl}/api/messenger/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
    });

  it('When a stranger opens any dashboard page, then only the sign-in form shows, and every admin call is 401', async () => {
    const stranger = await dashboard().browser.newPage({ viewport: VIEWPORTS.laptop });
    try {
      for (const p of PAGES) {
        await stranger.goto(`${stack().apiUrl}${p}`);
        await stranger.getByLabel('Admin password').waitFor();
        expect(await stranger.getByRole('button', { name: 'Sign in' }).isVisible(), p).to.equal(true);
        expect(await stranger.locator('[data-testid^="device-"], table').count(), p).to.equal(0);
      }
      const answers = await stranger.evaluate(async () =>
        Promise.all(
          ['/session', '/tokens', '/devices', '/devices/default/messages'].map(
            async (p) => (await fetch(`/api/admin/v1${p}`)).status,
          ),
        ),
      );
      expect(answers).to.deep.equal([401, 401, 401, 401]);
      await stranger.getByLabel('Admin password').fill('not it');
      await stranger.getByRole('button', { name: 'Sign in' }).click();
      await stranger.getByText('That password is not right.').waitFor();
      await screenshots(stranger, 'sign-in');
    } finally {
      await stranger.close();
    }
  });

  it('When the admin signs in, then the Devices page opens', async () => {
    await page.goto(`${stack().apiUrl}/dashboard`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/devices');
  });

  it('When a token is created under Settings → API, then its value is shown once and works on the public API', async () => {
    await page.goto(`${stack().apiUrl}/dashboard/settings/api`);
    await page.getByLabel('Name').fill('browser test');
    await page.getByLabel('Device (optional)').fill(deviceId);
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByTestId('new-token-value');
    tokenValue = (await shown.textContent()) ?? '';
    expect(tokenValue).to.match(/^mgw_/);
    expect(await page.getByRole('button', { name: 'Copy' }).isVisible()).to.equal(true);
    const row = page.locator('tr', { hasText: 'browser test' });
    expect(await row.textContent()).to.include(deviceId);
    expect(await row.getByRole('button', { name: 'Revoke' }).count()).to.equal(1);
    expect((await publicApi('/status', tokenValue)).status).to.equal(200);
    await screenshots(page, 'settings-api');
    // Shown once: after a reload the value is nowhere on the page.
    await page.reload();
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();
    await page.locator('tr', { hasText: 'browser test' }).waitFor();
    expect(await page.getByTestId('new-token-value').count()).to.equal(0);
    expect(await page.content()).not.to.include(tokenValue);
  });

  it('When a device is linked by the QR on the page, then the QR follows a new pairing and the row turns connected without a reload', async () => {
    await page.goto(`${stack().apiUrl}/dashboard/devices`);
    await page.evaluate(() => ((globalThis as unknown as { stayed: boolean }).stayed = true));
    await page.getByLabel('Device ID').fill(deviceId);
    await page.getByRole('button', { name: 'Link with QR code' }).click();
    const qr = page.getByTestId('qr-code');
    await qr.waitFor();
    const first = (await qr.getAttribute('data-qr')) ?? '';
    expect(first, 'the raw QR string').to.match(/^https:\/\/wa\.me\/settings\/linked_devices#/);
    expect(await qr.getAttribute('src')).to.match(/^data:image\/png;base64,/);

    // A new pairing (a forceNew connect by the token) replaces the code: the page follows it.
    const again = (await (
      await publicApi('/connect?forceNew=true&rawQrCode=true', tokenValue, 'POST')
    ).json()) as {
      qrCode: string;
    };
    expect(again.qrCode).to.be.a('string').and.not.equal(first);
    await waitFor(async () => (await qr.getAttribute('data-qr')) === again.qrCode, {
      timeoutMs: 10_000,
      what: 'the page to show the new QR',
    });
    // Sandbox mode (the stack runs against the simulator): the panel says how to let the simulated
    // phone scan this QR — the exact command, for the QR on screen.
    await page.getByTestId('sandbox-hint').waitFor();
    // Read together: the QR on screen and the command shown for it (the QR may turn over meanwhile).
    const [command, shownQr] = await page
      .locator('.link-result')
      .evaluate((el) => [
        el.querySelector('[data-testid="sandbox-command"]')?.textContent ?? '',
        el.querySelector('[data-testid="qr-code"]')?.getAttribute('data-qr') ?? '',
      ]);
    expect(command).to.include(`${stack().simulator.controlUrl}/phone/link`);
    await screenshots(page, 'devices-linking');

    // The command as a shell runs it (curl's arguments, printed instead of sent), then sent as curl would.
    const argv = JSON.parse(
      execFileSync(
        'sh',
        [
          '-c',
          `curl() { node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- "$@"; }\n${command}`,
        ],
        {
          encoding: 'utf8',
        },
      ),
    ) as string[];
    const url = argv.find((a) => a.startsWith('http'))!;
    const body = argv[argv.indexOf('-d') + 1]!;
    expect(JSON.parse(body)).to.deep.equal({ qr: shownQr, phone: ACCOUNT, name: 'Sandbox Account' });
    const linked = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(linked.status, await linked.clone().text()).to.equal(200);
    const row = page.getByTestId(`device-${deviceId}`);
    await row.getByText('Connected').waitFor({ timeout: 30_000 });
    expect(await row.textContent())
      .to.include('Sandbox Account')
      .and.include(`+${ACCOUNT}`);
    expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).to.equal(true);
    await page.getByText(`${deviceId} is connected`).waitFor();
    await screenshots(page, 'devices');
  });

  it('When a batch is sent, then the Messages page shows each message with its status and the batch progress', async () => {
    const res = await fetch(`${stack().apiUrl}/api/messenger/v1/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenValue}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        to: ['15550009101', '15550009102', '15550009103'],
        text: 'hello from the list',
      }),
    });
    expect(res.status).to.equal(202);
    const { messageId: batchId, messageIds } = (await res.json()) as {
      messageId: string;
      messageIds: string[];
    };
    await page.goto(`${stack().apiUrl}/dashboard/messages?device=${deviceId}`);
    for (const id of messageIds) await page.getByTestId(`message-${id}`).waitFor();
    const batch = page.getByTestId(`batch-${batchId}`);
    await batch.getByText('3 of 3 sent').waitFor({ timeout: 20_000 });
    // Sent, each still shows what it said (read from the batch's one sealed content).
    for (const id of messageIds) {
      const cell = page.getByTestId(`message-${id}`).locator('.msg-content');
      await waitFor(async () => (await cell.getAttribute('data-kind')) === 'text', {
        what: `the text of ${id}`,
      });
      expect(await cell.getByTestId('message-text').innerText()).to.equal('hello from the list');
    }
    await screenshots(page, 'messages');
  });

  it('When a contact writes to the device, then the Messages page lists it among the sent ones, newest first, with its text, and the direction filter shows one side', async () => {
    await stack().simApi('POST', '/contacts/15550009102/send', {
      to: ACCOUNT,
      text: 'is the shop open on sunday?',
    });
    await page.goto(`${stack().apiUrl}/dashboard/messages?device=${deviceId}`);
    const incoming = page.locator('tr[data-direction="inbound"]', { hasText: 'is the shop open on sunday?' });
    await incoming.waitFor({ timeout: 20_000 });
    expect(await incoming.innerText())
      .to.include('Incoming')
      .and.include('+15550009102')
      .and.include('Received');
    // Merged by time: the newest message (the contact's) comes first.
    const rows = page.locator('tbody tr[data-direction]');
    expect(await rows.first().getAttribute('data-direction')).to.equal('inbound');
    expect(await page.locator('tr[data-direction="outbound"]').count()).to.be.greaterThan(0);
    await screenshots(page, 'messages-inbound');

    await page.getByLabel('Direction').selectOption('inbound');
    await waitFor(
      async () =>
        (await page.locator('tr[data-direction="inbound"]').count()) > 0 &&
        (await page.locator('tr[data-direction="outbound"]').count()) === 0,
      { what: 'only incoming messages' },
    );
    expect(new URL(page.url()).searchParams.get('direction')).to.equal('inbound');
    await incoming.waitFor();
    await page.getByLabel('Direction').selectOption('outbound');
    // (While the filtered list loads the table is gone: wait for its outgoing rows.)
    await waitFor(
      async () =>
        (await page.locator('tr[data-direction="outbound"]').count()) > 0 &&
        (await page.locator('tr[data-direction="inbound"]').count()) === 0,
      { what: 'only outgoing messages' },
    );
    expect(new URL(page.url()).searchParams.get('direction')).to.equal('outbound');
  });

  it("When a device is paused because WhatsApp pushed back, then its row shows today's usage and the pause, and Resume now ends it", async () => {
    await markRestricted(stack().redis, deviceId, 'rate_limited', Date.now() + 3_600_000);
    await page.goto(`${stack().apiUrl}/dashboard/devices`);
    const cell = page.getByTestId(`device-sending-${deviceId}`);
    await cell.getByText(/Paused until .*\(rate limited\)/).waitFor();
    expect(await cell.textContent())
      .to.match(/^3/)
      .and.include('first contacts 3');
    await screenshots(page, 'devices-paused');
    await cell.getByRole('button', { name: 'Resume now' }).click();
    await page.getByText(`${deviceId}: sending resumed.`).waitFor();
    await waitFor(async () => (await cell.textContent())?.includes('Paused') === false, { what: 'resumed' });
  });

  it("When WhatsApp refused the device's messages and capped it, then its row shows the health score and the reasons", async () => {
    const cell = page.getByTestId(`device-health-${deviceId}`);
    await page.goto(`${stack().apiUrl}/dashboard/devices`);
    await cell.getByText('100 / 100', { exact: true }).waitFor();
    await recordHealthSignal(stack().redis, deviceId, 'refused463');
    await markRestricted(stack().redis, deviceId, 'account_restricted', Date.now() + 3_600_000);
    await cell.getByText('50 / 100', { exact: true }).waitFor();
    const text = (await cell.textContent()) ?? '';
    expect(text).to.include('capped: WhatsApp refuses new chats (new-chat cap or restricted account) −40');
    expect(text).to.include('1 refusal (ack 463) in the last 24 h −10');
    expect(await cell.locator('.badge').getAttribute('class')).to.include('badge-connecting');
    await screenshots(page, 'devices-health');
    await clearRestriction(stack().redis, deviceId);
    await cell.getByText('90 / 100', { exact: true }).waitFor();
  });

  it('When texts are edited and deleted, then the Messages page shows the current text as edited and the deleted ones as deleted', async () => {
    const contact = '15550009101';
    const send = async (body: Record<string, unknown>) => {
      const res = await fetch(`${stack().apiUrl}/api/messenger/v1/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenValue}`, 'content-type': 'application/json' },
        body: JSON.stringify({ to: contact, ...body }),
      });
      return { status: res.status, body: (await res.json()) as { messageId: string } };
    };
    const record = async (id: string) =>
      (
        (await (await publicApi(`/messages/${id}`, tokenValue)).json()) as {
          data: { status: string; edits?: unknown[] };
        }
      ).data;
    const edited = (await send({ text: 'the first draft' })).body.messageId;
    const deleted = (await send({ text: 'this one goes away' })).body.messageId;
    await waitFor(
      async () => (await record(edited)).status !== 'queued' && (await record(deleted)).status !== 'queued',
      {
        what: 'both sent',
        timeoutMs: 30_000,
      },
    );
    expect(
      (await send({ edit: { messageId: edited, text: 'The final wording of the text' } })).status,
    ).to.equal(202);
    expect((await send({ delete: { messageId: deleted } })).status).to.equal(202);
    const unsent = (
      await send({ text: 'scheduled, then deleted', sendAt: new Date(Date.now() + 60_000).toISOString() })
    ).body.messageId;
    expect((await send({ delete: { messageId: unsent } })).status).to.equal(200);
    await waitFor(
      async () => (await record(edited)).edits?.length === 1 && (await record(deleted)).status === 'deleted',
      { what: 'the edit and the delete recorded', timeoutMs: 30_000 },
    );
    // A group message with a mention, and a text to a number whose LID the device knows.
    const group = await stack().simApi<{ id: string }>('POST', '/groups', {
      subject: 'Shop team',
      members: ['15550009101', ACCOUNT, '15550009102'],
    });
    const toGroup = (await send({ to: group.id, text: 'Hi @15550009102', mentions: ['15550009102'] })).body
      .messageId;
    const lidContact = await stack().simApi<{ lid: string }>('POST', '/contacts', {
      phone: '15550009104',
      addressing: 'lid',
    });
    await stack().simApi('POST', '/contacts/15550009104/send', { to: ACCOUNT, text: 'hello shop' });
    await waitFor(
      async () => (await stack().redis.hget(keys.contactIdentities(deviceId), 'p:15550009104')) !== null,
      { what: "the contact's LID in the device map" },
    );
    const toPaired = (await send({ to: '15550009104', text: 'hello back' })).body.messageId;
    await waitFor(async () => (await record(toGroup)).status === 'sent', { what: 'group message sent' });

    await page.goto(`${stack().apiUrl}/dashboard/messages?device=${deviceId}`);
    const row = (id: string) => page.getByTestId(`message-${id}`);
    await row(edited).waitFor();
    const editedCell = row(edited).locator('.msg-content');
    await waitFor(async () => (await editedCell.getAttribute('data-kind')) === 'text', {
      what: 'edited row',
    });
    expect(await editedCell.innerText()).to.match(/The final wording of the text\s*\(edited\)/);
    for (const id of [deleted, unsent]) {
      expect(await row(id).locator('.msg-content').getAttribute('data-kind')).to.equal('deleted');
      expect(await row(id).locator('[data-status]').getAttribute('data-status')).to.equal('deleted');
    }
    // The edit and the delete are messages of their own, each naming what it changes.
    expect(await page.locator('.msg-content[data-kind="edit"]').count()).to.be.greaterThan(0);
    expect(await page.locator('.msg-content[data-kind="delete"]').count()).to.be.greaterThan(0);
    const groupRow = row(toGroup);
    await groupRow.waitFor();
    expect(await groupRow.locator('[data-recipient]').getAttribute('data-recipient')).to.equal('group');
    expect(await groupRow.locator('.recipient').innerText())
      .to.match(/group/i)
      .and.include(group.id);
    await waitFor(async () => (await groupRow.getByTestId('mentions').count()) === 1, {
      what: 'the mention',
    });
    expect(await groupRow.getByTestId('mentions').innerText()).to.equal('@+15550009102');
    await row(toPaired).waitFor();
    expect(await row(toPaired).locator('.recipient').innerText())
      .to.include('+15550009104')
      .and.include(`LID ${lidContact.lid}@lid`);
    // A message the LID-addressed contact wrote, found by id: who wrote it, both identities.
    const listed = (
      (await (await publicApi('/messages?limit=20', tokenValue)).json()) as {
        data: { messages: { messageId: string; direction: string; from?: string }[] };
      }
    ).data.messages;
    const wrote = listed.find((m) => m.direction === 'inbound' && m.from === '15550009104')!;
    await page.locator('#message-id').fill(wrote.messageId);
    await page.getByRole('button', { name: 'Find' }).click();
    const foundRecipient = page
      .locator('.card', { hasText: `Message ${wrote.messageId}` })
      .locator('.recipient');
    await foundRecipient.waitFor();
    expect(await foundRecipient.innerText())
      .to.match(/from/i)
      .and.include('+15550009104')
      .and.include(`LID ${lidContact.lid}@lid`);
    expect(await page.locator('.card', { hasText: `Message ${wrote.messageId}` }).innerText()).to.include(
      'hello shop',
    );
    await screenshots(page, 'messages-kinds');
  });

  it("When a device's webhook and policy are set in its settings, then the secret shows once and the admin API has the cap", async () => {
    expect([...WEBHOOK_EVENTS], 'the page offers every event type').to.deep.equal([...EVENT_TYPES]);
    await page.goto(`${stack().apiUrl}/dashboard/devices`);
    await page.getByTestId(`device-${deviceId}`).getByRole('link', { name: 'Manage' }).click();
    await page.getByRole('heading', { name: `Settings of ${deviceId}` }).waitFor();
    expect(new URL(page.url()).pathname).to.equal(`/dashboard/devices/${deviceId}`);
    await page.getByText('No webhook: events of this device are not sent anywhere.').waitFor();

    // Set: the secret shows once, with a copy button.
    await page.getByLabel('Webhook URL').fill(receiverUrl);
    await page.getByLabel('message.delivered').check();
    await page.getByLabel('session.status').check();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    const secret = (await page.getByTestId('new-webhook-secret').textContent()) ?? '';
    expect(secret).to.match(/^whsec_/);
    expect(await page.getByRole('button', { name: 'Copy' }).isVisible()).to.equal(true);
    const current = page.getByTestId('webhook-current');
    expect(await current.textContent())
      .to.include(receiverUrl)
      .and.include('message.delivered, session.status');

    // Policy: a daily cap override shows in the panel and through the admin API.
    await page.getByLabel('Daily cap').fill('25');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy saved').waitFor();
    expect(await page.getByTestId('policy-effective').textContent()).to.match(/Sent today\d+ \/ 25/);
    await screenshots(page, 'device-settings');
    const policy = await page.evaluate(
      async (p) => (await fetch(p)).json(),
      `/api/admin/v1/devices/${deviceId}/policy`,
    );
    expect(policy).to.nested.include({ 'overrides.dailyCap': 25, 'sending.dailyCap': 25 });

    // A bad value: the API's 400 details next to the form, nothing changed.
    await page.getByLabel('Daily cap').fill('-5');
    await page.getByLabel('Quiet hours').fill('late');
    await page.getByRole('button', { name: 'Save policy' }).click();
    const error = page.getByRole('alert');
    await error.getByText('dailyCap').waitFor();
    expect(await error.textContent()).to.include('22:00-07:00');
    expect(await page.getByLabel('Daily cap').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByLabel('Time zone').getAttribute('aria-invalid')).to.equal(null);
    await screenshots(page, 'device-settings-error');

    // Shown once: after a reload the secret is nowhere on the page; the webhook is.
    await page.reload();
    await current.getByText(receiverUrl).waitFor();
    expect(await page.getByTestId('new-webhook-secret').count()).to.equal(0);
    expect(await page.content()).not.to.include(secret);
    expect(await page.getByLabel('Daily cap').inputValue()).to.equal('25');

    // Rotate: a new secret, once.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('Secret rotated.').waitFor();
    const rotated = (await page.getByTestId('new-webhook-secret').textContent()) ?? '';
    expect(rotated)
      .to.match(/^whsec_/)
      .and.not.equal(secret);

    // Remove, after a confirmation; and the cap back to the default (empty = null).
    await page.getByRole('button', { name: 'Remove webhook' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, remove' }).click();
    await page.getByText('Webhook removed').waitFor();
    expect(await page.getByTestId('new-webhook-secret').count()).to.equal(0);
    const gone = await page.evaluate(
      async (p) => (await fetch(p)).status,
      `/api/admin/v1/devices/${deviceId}/webhook`,
    );
    expect(gone).to.equal(404);
    await page.getByLabel('Daily cap').fill('');
    await page.getByLabel('Quiet hours').fill('');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy saved').waitFor();
    const reset = await page.evaluate(
      async (p) => (await fetch(p)).json(),
      `/api/admin/v1/devices/${deviceId}/policy`,
    );
    expect((reset as { overrides: object }).overrides).to.deep.equal({});
  });

  it('When the token is revoked on the page, then the public API answers 401 for it', async () => {
    await page.goto(`${stack().apiUrl}/dashboard/settings/api`);
    const row = page.locator('tr', { hasText: 'browser test' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText('revoked: requests with it now get 401').waitFor();
    // The notice comes first, the table's refresh right after it.
    await page.locator('tr', { hasText: 'browser test' }).first().waitFor({ state: 'detached' });
    expect(await page.locator('tr', { hasText: 'browser test' }).count()).to.equal(0);
    expect((await publicApi('/status', tokenValue)).status).to.equal(401);
  });

  it('When /docs is opened, then the API reference renders from the gateway alone', async () => {
    await page.goto(`${stack().apiUrl}/docs`);
    await page.getByText('Messenger Gateway API').first().waitFor();
    await page.getByText('/api/messenger/v1/send').first().waitFor();
    await screenshots(page, 'docs');
  });

  it('When every page has been used, then every request the browser made went to the gateway', () => {
    const origin = new URL(stack().apiUrl).origin;
    const elsewhere = requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'));
    expect(requested.length).to.be.greaterThan(20);
    expect(elsewhere).to.deep.equal([]);
  });

  it('When Disconnect is confirmed, then the device is logged out and its row shows it', async () => {
    await page.goto(`${stack().apiUrl}/dashboard/devices`);
    const row = page.getByTestId(`device-${deviceId}`);
    await row.getByRole('button', { name: 'Disconnect' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).to.include(`Disconnect ${deviceId}?`);
    await screenshots(page, 'devices-disconnect-confirm');
    await dialog.getByRole('button', { name: 'Yes, disconnect' }).click();
    await row.getByText('Disconnected').waitFor({ timeout: 30_000 });
    expect(await row.getByRole('button', { name: 'Disconnect' }).count()).to.equal(0);
  });
});
