import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { SoftwareAuthenticator, waitFor } from '@mgw/testing';
import {
  ADMIN_PASSWORD as PASSWORD,
  VIEWPORTS,
  screenshots,
  useDashboardStack,
} from '../../../test/browser.js';
import { sweepPage } from '../../../test/sweep.js';

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
