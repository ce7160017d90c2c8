/**
 * A device's account on the dashboard in a real browser (Debian's chromium, whole stack,
 * simulator): from its settings, the profile and blocklist, the presence (the account's and its
 * contacts'), a username looked up and the proxy; on the Devices page, the link panel of a
 * passkey-gated account.
 *
 * Each `describe` is one suite as it was when it had a file of its own: its own helpers and its own
 * hooks, run one after the other. They share the mocha worker's one stack and one chromium
 * (useDashboardStack: the stack started by the worker's first dashboard suite and stopped when the
 * worker exits, reset before each suite to what a fresh one shows): each suite has a device, a
 * token, phone numbers and a browser context of its own.
 */
import { expect } from 'chai';
import sharp from 'sharp';
import type { Page } from 'playwright-core';
import { keys } from '@mgw/contracts';
import { SoftwareAuthenticator, waitFor } from '@mgw/testing';
import { audit } from './axe.js';
import { ADMIN_PASSWORD as PASSWORD, VIEWPORTS, screenshots, useDashboardStack } from './browser.js';
import { overflowing } from './overflow.js';
import { sweepPage } from './sweep.js';

describe("Dashboard: a device's profile and blocklist in a real browser (chromium, whole stack, simulator)", function () {
  this.timeout(150_000);

  interface SimProfile {
    name: string;
    about: string | null;
    picture: { bytes: number } | null;
    blocked: { lid: string; phone: string | null }[];
  }

  const dashboard = useDashboardStack(this);
  const account = '15552500001';
  const [blockedA, blockedB] = ['15552500011', '15552500012'];

  it('When the operator changes the name, about and photo and blocks and unblocks numbers, then WhatsApp has each change', async () => {
    const { stack, page } = dashboard();
    const simProfile = () => stack.simApi<SimProfile>('GET', `/accounts/${account}/profile`);
    for (const phone of [blockedA, blockedB]) await stack.simApi('POST', '/contacts', { phone });
    await stack.linkByQr(account, 'Dash Account');

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const profile = page.getByRole('region', { name: 'Profile' });
    await profile.getByTestId('profile-current').getByText(account).waitFor();
    expect(await profile.getByLabel('Name').inputValue()).to.equal('Dash Account');

    await profile.getByLabel('Name').fill('Bike Shop');
    await profile.getByLabel('About').fill('Repairs while you wait');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await profile.getByText('Profile saved.').waitFor();
    await waitFor(async () => (await simProfile()).name === 'Bike Shop', { what: 'the name at WhatsApp' });
    expect((await simProfile()).about).to.equal('Repairs while you wait');

    const png = await sharp({ create: { width: 80, height: 80, channels: 3, background: '#cc6633' } })
      .png()
      .toBuffer();
    await profile
      .getByLabel(/^Photo/)
      .setInputFiles({ name: 'shop.png', mimeType: 'image/png', buffer: png });
    await profile.getByRole('button', { name: 'Set photo' }).click();
    await profile.getByText('Photo set.').waitFor();
    expect((await simProfile()).picture, 'WhatsApp has a photo').to.not.equal(null);
    await profile.getByTestId('profile-current').getByText('set', { exact: true }).waitFor();

    const blocklist = page.getByRole('region', { name: 'Blocklist' });
    await blocklist.getByTestId('blocklist-empty').waitFor();
    await blocklist.getByLabel('Number to block').fill(blockedA);
    await blocklist.getByRole('button', { name: 'Block' }).click();
    await blocklist.getByText('Blocked.').waitFor();
    await blocklist.getByTestId('blocklist').getByText(blockedA).waitFor();
    expect((await simProfile()).blocked.map((b) => b.phone)).to.deep.equal([blockedA]);
    // The phone blocks another number: after a reload the page lists both.
    await stack.simApi('POST', `/accounts/${account}/blocklist`, { contact: blockedB, action: 'block' });
    await waitFor(
      async () => {
        await page.reload();
        await page.getByRole('region', { name: 'Blocklist' }).getByTestId('blocklist').waitFor();
        return (await page.getByTestId('blocklist').locator('tbody tr').count()) === 2;
      },
      { timeoutMs: 15_000, what: 'the pushed block listed' },
    );
    await screenshots(page, 'device-profile-blocklist');

    const row = page.getByTestId('blocklist').locator('tr', { hasText: blockedA });
    await row.getByRole('button', { name: 'Unblock' }).click();
    await page.getByText(`Unblocked +${blockedA}.`).waitFor();
    await waitFor(async () => (await simProfile()).blocked.length === 1, { what: 'the unblock at WhatsApp' });
    expect(await page.getByTestId('blocklist').locator('tbody tr').count()).to.equal(1);
    // The one the phone blocked is known by its LID only (the device never met it): unblocked so.
    await page.getByTestId('blocklist').getByRole('button', { name: 'Unblock' }).click();
    await page.getByTestId('blocklist-empty').waitFor();
    await waitFor(async () => (await simProfile()).blocked.length === 0, { what: 'the LID unblocked' });

    await page.getByRole('region', { name: 'Profile' }).getByRole('button', { name: 'Remove photo' }).click();
    await page.getByText('Photo removed.').waitFor();
    expect((await simProfile()).picture).to.equal(null);
    await screenshots(page, 'device-profile-blocklist-after');
  });
});

describe("Dashboard: the account's presence and its contacts' from the device's settings (chromium, whole stack, simulator)", function () {
  this.timeout(150_000);

  const dashboard = useDashboardStack(this);
  const account = '15552510001';
  const friend = '15552510011';

  it('When the operator shows the account online, watches a contact and looks up its profile, then WhatsApp sees the account online and the contact going online and typing shows live', async () => {
    const { stack, page } = dashboard();
    await stack.simApi('POST', '/contacts', { phone: friend });
    await stack.linkByQr(account, 'Presence Shop');
    const simOnline = async () =>
      (await stack.simApi<{ online: boolean }>('GET', `/accounts/${account}/profile`)).online;

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: 'Presence' });
    await section.getByTestId('presence-empty').waitFor();
    expect(await simOnline()).to.equal(false);

    await section.getByRole('button', { name: 'Show as online' }).click();
    await section.getByText('The account shows as online.').waitFor();
    await waitFor(simOnline, { timeoutMs: 10_000, what: 'the account online at WhatsApp' });

    await section.getByLabel('Contact (number or LID)').fill(friend);
    await section.getByRole('button', { name: 'Watch presence' }).click();
    const row = section.getByTestId(`presence-${friend}`);
    await row.waitFor();
    // The subscription's first answer: offline, never seen.
    await row.getByText('Offline').waitFor({ timeout: 10_000 });
    const drive = (body: Record<string, unknown>) =>
      stack.simApi<{ delivered: number }>('POST', `/contacts/${friend}/presence`, body);
    expect((await drive({ presence: 'available' })).delivered).to.equal(1);
    await row.getByText('Online').waitFor({ timeout: 10_000 });
    expect((await drive({ presence: 'composing', to: account })).delivered).to.equal(1);
    await row.getByText('Typing…').waitFor({ timeout: 10_000 });
    expect(await row.locator('td').first().innerText()).to.equal(`+${friend}`);

    await section.getByRole('button', { name: 'Look up profile' }).click();
    const profile = section.getByTestId('contact-profile');
    await profile.waitFor({ timeout: 10_000 });
    expect(await profile.innerText()).to.include(`+${friend}`);

    await section.getByRole('button', { name: 'Show as offline' }).click();
    await section.getByText('The account shows as offline.').waitFor();
    await waitFor(async () => !(await simOnline()), { timeoutMs: 10_000, what: 'the account offline' });

    // A number that is none: the API's message, on the page.
    await section.getByLabel('Contact (number or LID)').fill('12ab');
    await section.getByRole('button', { name: 'Watch presence' }).click();
    await section.getByText(/Could not watch the contact: /).waitFor();

    await section.scrollIntoViewIfNeeded();
    await screenshots(page, 'presence-section');
    expect(await audit(page, 'presence section')).to.deep.equal([]);
    expect(await overflowing(page)).to.deep.equal([]);
  });
});

describe("Dashboard: a WhatsApp username looked up from the device's settings (chromium, whole stack, simulator)", function () {
  this.timeout(150_000);

  const dashboard = useDashboardStack(this);
  const account = '15552520001';
  const guarded = '15552520002';

  it('When the operator looks up a username guarded by a PIN, then the page asks for its PIN, with it shows the LID and number, and a broken one shows the rule; a send may then name it', async () => {
    const { stack, page } = dashboard();
    const contact = await stack.simApi<{ lid: string }>('POST', '/contacts', {
      phone: guarded,
      username: 'garden.shop',
      usernamePin: '2468',
    });
    await stack.linkByQr(account, 'Username Shop');

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: 'Usernames' });
    await section.getByLabel('Username').fill('@Garden.Shop');
    await section.getByRole('button', { name: 'Look up username' }).click();
    await section
      .getByText('@garden.shop is guarded by a PIN: enter its 4 digits and look it up again.')
      .waitFor();
    const result = section.getByTestId('username-result');
    expect(await result.innerText()).to.include('Needs its PIN');

    await section.getByLabel('PIN (if it has one)').fill('2468');
    await section.getByRole('button', { name: 'Look up username' }).click();
    await section.getByText('@garden.shop found: sends may name it as @garden.shop.').waitFor();
    const shown = await result.innerText();
    expect(shown).to.include('Found');
    expect(shown).to.include(`${contact.lid}@lid`);
    expect(shown).to.include(`+${guarded}`);
    expect(
      await section.getByLabel('PIN (if it has one)').inputValue(),
      'the PIN is not kept on the page',
    ).to.equal('');

    // The device remembers it: a send names it without its PIN.
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: '@garden.shop',
      text: 'from the dashboard',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);

    await section.getByLabel('Username').fill('shop.com');
    await section.getByRole('button', { name: 'Look up username' }).click();
    await section.getByText(/Could not look the username up: .*rule: domain_suffix/).waitFor();

    await section.scrollIntoViewIfNeeded();
    await screenshots(page, 'username-section');
    expect(await audit(page, 'username section')).to.deep.equal([]);
    expect(await overflowing(page)).to.deep.equal([]);
  });
});

describe("Dashboard: a device's proxy in a real browser (chromium, whole stack)", function () {
  this.timeout(90_000);
  const PROXY_PASSWORD = 'dash-proxy-pw-123';

  const dashboard = useDashboardStack(this);

  it('When the admin sets, reads and removes a proxy, then the page never shows its credentials and the store has it sealed', async () => {
    const { stack, page } = dashboard();
    const { deviceId, redis } = stack;
    await page.goto(`${stack.apiUrl}/dashboard/devices/${deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: 'Proxy' });
    await section.getByText('No proxy of its own.').waitFor();

    // A URL that is no proxy URL: the API's 400, nothing stored.
    await section.getByLabel('Proxy URL').fill('ftp://127.0.0.1:21');
    await section.getByRole('button', { name: 'Save proxy' }).click();
    await section.getByText(/Invalid request/).waitFor();
    expect(await redis.exists(keys.deviceProxy(deviceId))).to.equal(0);

    await section.getByLabel('Proxy URL').fill(`socks5://dash:${PROXY_PASSWORD}@127.0.0.1:1080`);
    await section.getByRole('button', { name: 'Save proxy' }).click();
    await section.getByText(/Proxy saved\. No sender holds the device now/).waitFor();
    const current = section.getByTestId('proxy-current');
    await current.getByText('socks5://127.0.0.1:1080').waitFor();
    expect(await current.textContent()).to.include('yes (hidden)');
    expect(await section.getByLabel('Proxy URL').inputValue(), 'the field is cleared').to.equal('');
    expect(await page.content()).not.to.include(PROXY_PASSWORD);
    expect(await redis.get(keys.deviceProxy(deviceId))).not.to.include(PROXY_PASSWORD);
    await screenshots(page, 'device-proxy');

    // After a reload: where it is, never the credentials.
    await page.reload();
    await page.getByRole('region', { name: 'Proxy' }).getByText('socks5://127.0.0.1:1080').waitFor();
    expect(await page.content()).not.to.include(PROXY_PASSWORD);

    // Directly, past DEVICE_PROXY_URL: the setting replaces the proxy.
    await page
      .getByRole('region', { name: 'Proxy' })
      .getByRole('button', { name: 'Connect directly' })
      .click();
    await page.getByText(/The device connects directly\./).waitFor();
    await page
      .getByRole('region', { name: 'Proxy' })
      .getByTestId('proxy-current')
      .getByText(/not through DEVICE_PROXY_URL/)
      .waitFor();
    await screenshots(page, 'device-proxy-direct');
    expect(
      await page
        .getByRole('region', { name: 'Proxy' })
        .getByRole('button', { name: 'Connect directly' })
        .count(),
    ).to.equal(0);

    await page.getByRole('region', { name: 'Proxy' }).getByRole('button', { name: 'Remove proxy' }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await page.getByText(/Proxy removed\./).waitFor();
    await waitFor(async () => (await redis.exists(keys.deviceProxy(deviceId))) === 0, {
      what: 'proxy removed',
    });
  });
});

/**
 * Issue 67 in the console: the Devices page's link panel follows a passkey-gated link step by step
 * (what to do while WhatsApp waits for the passkey, with its countdown; verifying; the code with
 * Confirm; finishing) and says in plain words why a failed attempt ended — in Debian's Chromium at
 * 1366 and 390 px, against the whole stack and the simulator playing WhatsApp's gate. The
 * assertion is made by a software authenticator and handed in through the admin API's new routes
 * (the extension's own end-to-end test is features/connection/e2e/passkey-link.test.ts).
 */
describe('Dashboard: the link panel of a passkey-gated account (issue 67; chromium at 1366 and 390 px, whole stack, simulator)', function () {
  this.timeout(480_000);
  /** How long WhatsApp may take to answer an assertion: the no-continuation case ends after it. */
  const CONTINUATION_MS = 6000;

  interface PasskeyData {
    step: string;
    expiresAt: string;
    requestOptions: { challenge: string };
    code?: string;
  }

  const dashboard = useDashboardStack(this);
  const passkey = new SoftwareAuthenticator();

  /** An admin API call made by the signed-in page: its session cookie and CSRF token. */
  const admin = (page: Page, method: string, path: string, body?: unknown) =>
    page.evaluate(
      async ({ method, path, body }) => {
        const session = (await (await fetch('/api/admin/v1/session')).json()) as { csrfToken?: string };
        const res = await fetch(`/api/admin/v1${path}`, {
          method,
          headers: {
            'x-csrf-token': session.csrfToken ?? '',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      },
      { method, path, body },
    );

  /** A gated account; the panel links `deviceId` by QR and the phone scans it. */
  async function linkGated(page: Page, deviceId: string, phone: string, faults?: Record<string, unknown>) {
    const { stack } = dashboard();
    await stack.simApi('POST', `/accounts/${phone}/passkey/authenticator`, {
      credentialId: passkey.credentialId.toString('base64url'),
      publicKey: passkey.spki,
    });
    await stack.simApi('POST', `/accounts/${phone}/passkey/gate`, { gate: 'qr' });
    if (faults) await stack.simApi('POST', `/accounts/${phone}/passkey/faults`, faults);
    await page.setViewportSize(VIEWPORTS.laptop);
    await page.goto(`${stack.apiUrl}/dashboard/devices`);
    await page.getByLabel('Device ID').fill(deviceId);
    await page.getByRole('button', { name: 'Link with QR code' }).click();
    const qr = (await page.getByTestId('qr-code').getAttribute('data-qr')) ?? '';
    await stack.simApi('POST', '/phone/link', { qr, phone, name: 'Gated Shop' });
    await page.getByTestId('passkey-steps').and(page.locator('[data-step="assertion"]')).waitFor();
  }

  /** The assertion a passkey makes for the pending request, handed in through the admin API. */
  async function assert(page: Page, deviceId: string) {
    const pending = await admin(page, 'GET', `/devices/${deviceId}/connect/passkey`);
    expect(pending.status, JSON.stringify(pending.body)).to.equal(200);
    const { challenge } = (pending.body.data as PasskeyData).requestOptions;
    const taken = await admin(page, 'POST', `/devices/${deviceId}/connect/passkey`, {
      assertion: passkey.credential(challenge),
    });
    expect(taken.status, JSON.stringify(taken.body)).to.equal(202);
  }

  /** axe and the overflow check at both widths, and the screenshots to look at, in one pass over the widths. */
  async function check(page: Page, name: string) {
    const found = await sweepPage(page, name);
    expect(found.axe).to.deep.equal([]);
    expect(found.overflow).to.deep.equal([]);
  }

  before(async () => {
    const { stack, page } = dashboard();
    await page.goto(`${stack.apiUrl}/dashboard/devices`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', exact: true, level: 1 }).waitFor();
  });

  // A failure says where the panel and the link stood: its text, the device and its pairing.
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    const { page } = dashboard();
    const panel = await page
      .locator('.link-result')
      .textContent()
      .catch((err: Error) => err.message);
    const devices = await admin(page, 'GET', '/devices').catch((err: Error) => err.message);
    console.error(`    panel: ${panel}\n    devices: ${JSON.stringify(devices)}`);
    await screenshots(page, 'devices-passkey-failed-test').catch(() => undefined);
  });

  it('When a gated account is linked from the panel, then it shows what to do with the countdown, the code with Confirm, finishing, and the device connected', async () => {
    const { page } = dashboard();
    const deviceId = 'passkey-shop';
    const idle = await admin(page, 'GET', `/devices/${deviceId}/connect/passkey`);
    expect(idle).to.deep.equal({
      status: 404,
      body: { success: false, error: 'No passkey request is waiting for this device' },
    });
    await linkGated(page, deviceId, '15556700001');

    const steps = page.getByTestId('passkey-steps');
    await steps.getByRole('heading', { name: 'Waiting for the passkey' }).waitFor();
    expect(await page.getByTestId('qr-code').count(), 'the used QR is gone').to.equal(0);
    const first = await page.getByTestId('passkey-countdown').textContent();
    expect(first).to.match(/^(10:00|9:[0-5]\d)$/);
    await waitFor(async () => (await page.getByTestId('passkey-countdown').textContent()) !== first, {
      timeoutMs: 30_000,
      what: 'the countdown to tick',
    });
    const text = (await steps.textContent()) ?? '';
    expect(text).to.include('integrations/passkey-extension').and.include('web.whatsapp.com');
    for (const way of ['This computer', 'The phone', 'A password manager']) expect(text).to.include(way);
    expect(await steps.locator('[aria-current="step"]').textContent()).to.match(/Passkey/);
    // The device's row says it too, live.
    await page.getByTestId(`device-passkey-${deviceId}`).getByText('waiting for the passkey').waitFor();
    await check(page, 'devices-passkey-waiting');

    // The admin routes refuse what does not fit the link: a confirmation before the code, another challenge.
    const early = await admin(page, 'POST', `/devices/${deviceId}/connect/passkey/confirm`, {
      code: 'ABCD-EFGH',
    });
    expect(early).to.deep.equal({
      status: 409,
      body: { success: false, error: 'The passkey link is at another step', step: 'assertion' },
    });
    const stale = await admin(page, 'POST', `/devices/${deviceId}/connect/passkey`, {
      assertion: passkey.credential('c3RhbGUtY2hhbGxlbmdl'),
    });
    expect(stale.status, JSON.stringify(stale.body)).to.equal(400);

    await assert(page, deviceId);
    await steps.getByRole('heading', { name: 'Compare the code' }).waitFor();
    const view = await admin(page, 'GET', `/devices/${deviceId}/connect/passkey`);
    const code = (view.body.data as PasskeyData).code!;
    expect(code).to.match(/^[1-9A-HJ-NP-TV-Z]{4}-[1-9A-HJ-NP-TV-Z]{4}$/);
    expect(await page.getByTestId('passkey-code').textContent()).to.equal(code);
    await check(page, 'devices-passkey-code');

    await page.getByRole('button', { name: 'Confirm: the codes match' }).click();
    await steps.getByRole('heading', { name: 'Finishing the link…' }).waitFor();
    await check(page, 'devices-passkey-finishing');
    await dashboard().stack.simApi('POST', '/accounts/15556700001/passkey/confirm', { code });
    await page
      .getByText(`${deviceId} is connected as Gated Shop · +15556700001`)
      .waitFor({ timeout: 90_000 });
    await page.getByTestId(`device-${deviceId}`).getByText('Connected').waitFor();
  });

  it('When WhatsApp never answers the assertion, then the panel shows verifying, then why the link ended in plain words', async () => {
    const { page } = dashboard();
    const deviceId = 'passkey-quiet';
    await linkGated(page, deviceId, '15556700002', { withholdContinuation: true });
    await assert(page, deviceId);
    const steps = page.getByTestId('passkey-steps');
    await steps.getByRole('heading', { name: 'Verifying the passkey…' }).waitFor();
    await check(page, 'devices-passkey-verifying');
    const ended = page.getByRole('alert').filter({ hasText: 'The link ended' });
    await ended.waitFor({ timeout: CONTINUATION_MS + 60_000 });
    expect(await ended.textContent()).to.equal(
      'The link ended: WhatsApp took the passkey but the phone never answered. Start again for a new QR or code.',
    );
    await page.getByTestId(`device-${deviceId}`).getByText('no answer after the passkey').waitFor();
    await check(page, 'devices-passkey-failed');
  });
});
