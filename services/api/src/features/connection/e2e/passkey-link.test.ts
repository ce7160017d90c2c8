/**
 * Issue 67: an account that a passkey guards, linked through the browser extension
 * (integrations/passkey-extension) in Debian's Chromium against the whole stack and the simulator
 * playing WhatsApp's gate (docs/passkeys.md). The browser's WebAuthn is real: a DevTools virtual
 * authenticator holds the passkey whose public key the simulated account knows, and the assertion
 * is made on https://web.whatsapp.com (a blank page of the test's, on 127.0.0.1 over TLS).
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { keys } from '@mgw/contracts';
import { SoftwareAuthenticator, TestDevice, useStack, waitFor } from '@mgw/testing';
import {
  ExtensionPanel,
  WHATSAPP_WEB,
  addVirtualPasskey,
  configureExtension,
  evaluateInContentScript,
  launchWithExtension,
  requireChromium,
  startWebWhatsApp,
  type ExtensionBrowser,
  type WebWhatsApp,
} from '../../../../test/helpers/passkey-browser.js';
import { ARTIFACTS } from '@mgw/testing/browser';

interface PasskeyData {
  step: string;
  expiresAt: string;
  requestOptions: Record<string, unknown>;
  code?: string;
}
interface SimLink {
  step: string;
  code: string | null;
  confirmed: boolean;
  rejections: number;
  lastRejection: string | null;
  error?: string;
}

/** How long WhatsApp may take to answer an assertion here: the no-continuation case ends after it. */
const CONTINUATION_MS = 5000;

describe('e2e: a passkey-gated account linked through the browser extension (Chromium, whole stack, simulator)', function () {
  this.timeout(480_000);
  let web: WebWhatsApp;
  let browser: ExtensionBrowser;
  let panel: ExtensionPanel;
  const passkey = new SoftwareAuthenticator();
  let nextPhone = 15550670001;

  before(async () => {
    // Before the stack starts: a machine without the browser fails here, saying what to install.
    requireChromium();
    web = await startWebWhatsApp();
  });
  const stack = useStack({
    env: {
      PASSKEY_CONTINUATION_TIMEOUT_MS: String(CONTINUATION_MS),
      // One QR: a pairing whose phone never answers ends after the first QR's 60 s.
      QR_MAX_ATTEMPTS: '1',
    },
  });
  before(async () => {
    browser = await launchWithExtension(web, new URL(stack().apiUrl).origin);
    await addVirtualPasskey(browser.cdp, passkey);
    panel = new ExtensionPanel(browser.page, browser.cdp);
  });
  after(async () => {
    await browser?.close();
    await web?.close();
  });
  afterEach(async () => {
    // Each test starts from an unlinked device and an account without faults.
    await stack().simApi('DELETE', '/faults');
    const status = (await stack().api<{ status: string }>('GET', '/status')).body.status;
    if (status !== 'disconnected') await stack().api('POST', '/disconnect');
  });

  const deviceId = () => stack().deviceId;
  const passkeyNow = () =>
    stack().api<{ data?: PasskeyData; error?: string; step?: string }>('GET', '/connect/passkey');
  const simLink = async (phone: string) =>
    (await stack().simApi<{ link: SimLink }>('GET', `/accounts/${phone}/passkey`)).link;

  /** A new account whose `gate` flows need `passkey` (with `faults`). */
  async function gatedAccount(gate: 'qr' | 'code' | 'both' | 'none', faults?: Record<string, unknown>) {
    const phone = String(nextPhone++);
    await stack().simApi('POST', `/accounts/${phone}/passkey/authenticator`, {
      credentialId: passkey.credentialId.toString('base64url'),
      publicKey: passkey.spki,
    });
    await stack().simApi('POST', `/accounts/${phone}/passkey/gate`, { gate });
    if (faults) await stack().simApi('POST', `/accounts/${phone}/passkey/faults`, faults);
    return phone;
  }

  /** POST /connect by QR; the phone scans it: the simulator answers once WhatsApp asked for the passkey. */
  async function scanGated(phone: string) {
    const connect = await stack().api<{ qrCode?: string }>('POST', '/connect?rawQrCode=true');
    expect(connect.status, JSON.stringify(connect.body)).to.equal(200);
    const scan = await stack().simApi<{ passkey?: SimLink }>('POST', '/phone/link', {
      qr: connect.body.qrCode,
      phone,
      name: 'Gated Account',
    });
    expect(scan.passkey?.step, JSON.stringify(scan)).to.equal('awaiting-assertion');
  }

  /** The status says the link waits for the passkey (at `step`). */
  async function waitForPasskeyStep(step: string) {
    let last: Record<string, unknown> = {};
    await waitFor(
      async () => {
        last = (await stack().api('GET', '/status')).body;
        return last.reason === 'passkey_required' && (last.passkey as { step?: string })?.step === step;
      },
      { timeoutMs: 45_000, what: `GET /status at passkey step ${step}` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last: ${JSON.stringify(last)}`);
    });
    return last;
  }

  /** A screenshot of the extension's panel on the page, for people to look at (with the dashboard's). */
  const shot = async (name: string) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await browser.page.screenshot({ path: path.join(ARTIFACTS, `extension-${name}.png`) });
  };

  /** The operator opens WhatsApp Web (again): the extension asks the gateway at once. */
  const openWhatsAppWeb = async () => {
    await browser.page.goto(`${WHATSAPP_WEB}/`);
    await browser.page.bringToFront();
  };

  /**
   * The attempt ended with `reason` and left nothing behind: status disconnected (with `reason`
   * when it is a passkey reason, the only ones GET /status names), no request to answer, no
   * credentials, no lease, not linked.
   */
  async function expectEndedCleanly(reason: string, withinMs = 90_000) {
    const status = await stack().waitForStatus('disconnected', withinMs);
    if (reason.startsWith('passkey_')) expect(status.reason, JSON.stringify(status)).to.equal(reason);
    expect(status).not.to.have.property('passkey');
    const record = await stack().redis.hget(keys.session(deviceId()), 'lastDisconnectReason');
    expect(record).to.equal(reason);
    expect((await passkeyNow()).status).to.equal(404);
    await waitFor(async () => (await stack().redis.exists(keys.lease(deviceId()))) === 0, {
      timeoutMs: 60_000,
      what: 'the pairing lease released',
    });
    expect(await stack().redis.keys(keys.authPattern(deviceId()))).to.deep.equal([]);
    expect(await stack().redis.sismember(keys.linkedDevices(), deviceId())).to.equal(0);
    const pairing = await stack().redis.hget(keys.pairing(deviceId()), 'state');
    expect(pairing === null || pairing === 'failed', `pairing record: ${pairing}`).to.equal(true);
  }

  /** The linked account sends to a contact and receives from one, through the gateway. */
  async function sendsAndReceives(phone: string) {
    const contact = String(nextPhone++);
    const sent = await stack().api<{ messageId: string }>('POST', '/send', {
      to: contact,
      text: 'linked by passkey',
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    await waitFor(async () => (await stack().inbox(contact)).some((m) => m.text === 'linked by passkey'), {
      timeoutMs: 30_000,
      what: 'the message in the contact’s inbox',
    });
    await stack().simApi('POST', `/contacts/${contact}/send`, { to: phone, text: 'got it, thanks' });
    await waitFor(
      async () => {
        const page = await stack().api<{ data?: { messages: { direction: string; text?: string }[] } }>(
          'GET',
          `/chats/${contact}/messages`,
        );
        return !!page.body.data?.messages.some(
          (m) => m.direction === 'inbound' && m.text === 'got it, thanks',
        );
      },
      { timeoutMs: 30_000, what: 'the contact’s answer in GET /chats/:chatId/messages' },
    );
  }

  it('When the extension is set up on its settings page, then it may reach that gateway and WhatsApp Web only, and checks the token', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const settingsShot = path.join(ARTIFACTS, 'extension-settings.png');
    const said = await configureExtension(browser, stack().apiUrl, stack().token, settingsShot);
    expect(said).to.equal('The gateway answers: the device is disconnected.');
    const granted = (await browser.worker.evaluate('chrome.permissions.getAll()')) as {
      origins: string[];
      permissions: string[];
    };
    expect(granted.permissions).to.deep.equal(['storage']);
    expect([...granted.origins].sort()).to.deep.equal(
      [`${new URL(stack().apiUrl).origin}/*`, `${WHATSAPP_WEB}/*`].sort(),
    );
    // The token stays with the worker and the settings page: the content script on WhatsApp Web
    // cannot read the extension's storage, nor ask the worker for the settings page's check.
    await openWhatsAppWeb();
    const storage = await evaluateInContentScript(
      browser,
      `chrome.storage.local.get('token').then((r) => 'read: ' + JSON.stringify(r), (e) => 'refused: ' + e.message)`,
    );
    expect(storage).to.match(/^refused: /);
    const check = await evaluateInContentScript(browser, `chrome.runtime.sendMessage({ kind: 'check' })`);
    expect(check).to.deep.equal({ refused: true });
    // With no request waiting, the extension shows nothing on the page.
    expect(await panel.text()).to.equal('');
  });

  it('When a QR-gated account is linked, then the extension makes the assertion on web.whatsapp.com, shows the phone’s code, the operator confirms it, and the device sends and receives', async () => {
    const phone = await gatedAccount('qr');
    await scanGated(phone);
    const waiting = await waitForPasskeyStep('assertion');
    const request = (await passkeyNow()).body.data!;
    expect(request.requestOptions).to.include({ rpId: 'whatsapp.com', userVerification: 'required' });
    expect(Date.parse(request.expiresAt)).to.equal(
      Date.parse((waiting.passkey as { expiresAt: string }).expiresAt),
    );

    await openWhatsAppWeb();
    expect(await panel.waitForText(/The link waits for the passkey/)).to.match(/Expires in \d+:\d\d/);
    await shot('panel-waiting');
    await panel.click('Use passkey');
    const compare = await panel.waitForText(/Compare the codes/);
    await shot('panel-code');
    const { code } = (await passkeyNow()).body.data!;
    expect(code).to.match(/^[1-9A-HJ-NP-TV-Z]{4}-[1-9A-HJ-NP-TV-Z]{4}$/);
    expect(compare).to.include(code);
    const onPhone = await simLink(phone);
    expect(onPhone).to.include({ code, rejections: 0, lastRejection: null });
    await waitForPasskeyStep('confirm_code');

    // The phone's user confirms the code first; then the operator, in the extension.
    await stack().simApi('POST', `/accounts/${phone}/passkey/confirm`, { code });
    await panel.click('Confirm');
    const status = await stack().waitForStatus('connected', 90_000);
    expect(status).to.include({ phone, name: 'Gated Account' });
    expect(status).not.to.have.property('reason');
    await panel.waitForText(/The passkey steps are done/);
    expect((await simLink(phone)).step).to.equal('linked');

    // Each step was a session.status event; none carries the code.
    const events = await stack().api<{ data: { events: { type: string; data: Record<string, unknown> }[] } }>(
      'GET',
      '/events?types=session.status&limit=50',
    );
    const steps = events.body.data.events
      .map((e) => e.data)
      .filter((d) => d.reason === 'passkey_required')
      .map((d) => (d.passkey as { step: string }).step);
    expect(new Set(steps)).to.include.members(['assertion', 'verifying', 'confirm_code', 'finishing']);
    expect(JSON.stringify(events.body)).not.to.include(code!);
    // The browser asked WhatsApp Web's page for the page, nothing else.
    expect(web.requests.filter((r) => !/^GET \/(favicon\.ico)?$/.test(r))).to.deep.equal([]);

    await sendsAndReceives(phone);
  });

  it('When a code-gated account is linked by pairing code, then the extension makes the assertion and the operator confirms before the phone does', async () => {
    const phone = await gatedAccount('code');
    const connect = await stack().api<{ pairingCode?: string }>(
      'POST',
      `/connect?method=pairingCode&phoneNumber=${phone}`,
    );
    expect(connect.body.pairingCode, JSON.stringify(connect.body)).to.match(/^[A-Z0-9]{8}$/);
    const typed = await stack().simApi<{ passkey?: SimLink }>('POST', '/phone/link', {
      pairingCode: connect.body.pairingCode,
      phone,
      name: 'Code Account',
    });
    expect(typed.passkey?.step).to.equal('awaiting-assertion');
    await waitForPasskeyStep('assertion');
    // A connect meanwhile says the link waits for the passkey, not a stale code.
    const again = await stack().api<{ message?: string; pairingCode?: string }>(
      'POST',
      `/connect?method=pairingCode&phoneNumber=${phone}`,
    );
    expect(again.body.pairingCode).to.equal(undefined);
    expect(again.body.message).to.match(/passkey/);

    await openWhatsAppWeb();
    await panel.waitForText(/The link waits for the passkey/);
    await panel.click('Use passkey');
    const compare = await panel.waitForText(/Compare the codes/);
    const { code } = (await passkeyNow()).body.data!;
    expect(compare).to.include(code);
    await panel.click('Confirm');
    await panel.waitForText(/Finishing the link/);
    await waitFor(async () => (await simLink(phone)).step === 'awaiting-confirmation', {
      what: 'the phone waiting for its user',
    });
    expect((await stack().api<{ status: string }>('GET', '/status')).body.status).to.equal('connecting');
    await stack().simApi('POST', `/accounts/${phone}/passkey/confirm`, { code });
    expect(await stack().waitForStatus('connected', 90_000)).to.include({ phone, name: 'Code Account' });
    await sendsAndReceives(phone);
  });

  it('When WhatsApp refuses the assertion, then the extension says so and the attempt ends passkey_rejected, leaving nothing behind', async () => {
    const phone = await gatedAccount('qr', { rejectAssertion: true });
    await scanGated(phone);
    await openWhatsAppWeb();
    await panel.waitForText(/The link waits for the passkey/);
    await panel.click('Use passkey');
    await panel.waitForText(/WhatsApp refused the passkey/);
    await shot('panel-refused');
    expect((await simLink(phone)).lastRejection).to.equal('fault');
    await expectEndedCleanly('passkey_rejected');
  });

  it('When WhatsApp never answers the assertion, then the link shows verifying and ends passkey_no_continuation, leaving nothing behind', async () => {
    const phone = await gatedAccount('qr', { withholdContinuation: true });
    await scanGated(phone);
    await openWhatsAppWeb();
    await panel.waitForText(/The link waits for the passkey/);
    await panel.click('Use passkey');
    await panel.waitForText(/Verifying the passkey/);
    await waitForPasskeyStep('verifying');
    await expectEndedCleanly('passkey_no_continuation');
    await panel.waitForText(/The passkey request ended/);
  });

  it('When the request expires before the passkey is used, then the attempt ends passkey_expired, leaving nothing behind', async () => {
    const phone = await gatedAccount('qr', { timeoutMs: 6000 });
    await scanGated(phone);
    await openWhatsAppWeb();
    await panel.waitForText(/The link waits for the passkey/);
    await expectEndedCleanly('passkey_expired');
    await panel.waitForText(/The passkey request ended/);
    expect((await simLink(phone)).step).to.equal('expired');
  });

  it('When the request comes without its options, then the gateway asks WhatsApp for them and the link goes on through the extension', async () => {
    const phone = await gatedAccount('qr', { omitOptions: true });
    await scanGated(phone);
    await waitForPasskeyStep('assertion');
    expect((await passkeyNow()).body.data!.requestOptions).to.include({ rpId: 'whatsapp.com' });
    await openWhatsAppWeb();
    await panel.waitForText(/The link waits for the passkey/);
    await panel.click('Use passkey');
    await panel.waitForText(/Compare the codes/);
    const { code } = (await passkeyNow()).body.data!;
    await stack().simApi('POST', `/accounts/${phone}/passkey/confirm`, { code });
    await panel.click('Confirm');
    expect(await stack().waitForStatus('connected', 90_000)).to.include({ phone });
  });

  it('When the phone sends primary_hello without its wrapped key and no passkey request follows, then the pairing ends pairing_code_failed within 15 s, leaving nothing behind', async () => {
    const phone = await gatedAccount('none', { codeWithoutWrappedKey: true });
    const connect = await stack().api<{ pairingCode?: string }>(
      'POST',
      `/connect?method=pairingCode&phoneNumber=${phone}`,
    );
    expect(connect.body.pairingCode).to.match(/^[A-Z0-9]{8}$/);
    // The phone waits for a companion_finish the gateway cannot send, and gives up (15 s).
    const typed = await fetch(`${stack().simulator.controlUrl}/phone/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pairingCode: connect.body.pairingCode, phone, name: 'No wrapped key' }),
    });
    expect(typed.status).to.equal(400);
    // The phone's 15 s and the gateway's 15 s run side by side: either may have ended first.
    expect((await stack().api<{ status: string }>('GET', '/status')).body.status).to.be.oneOf([
      'connecting',
      'disconnected',
    ]);
    expect((await passkeyNow()).status).to.equal(404);
    // Nothing more comes: the gateway waits 15 s for a passkey request, then ends the pairing.
    await expectEndedCleanly('pairing_code_failed', 120_000);
  });

  it('When the connection service restarts in the middle of the ceremony, then the attempt ends (shutdown), leaving nothing behind, and a new link goes through', async () => {
    const phone = await gatedAccount('qr');
    await scanGated(phone);
    await openWhatsAppWeb();
    await panel.waitForText(/The link waits for the passkey/);
    await panel.click('Use passkey');
    await panel.waitForText(/Compare the codes/);
    const { code } = (await passkeyNow()).body.data!;

    const old = stack().processes.find(
      (p) => p.name.startsWith('connection') && p.child.exitCode === null && p.child.signalCode === null,
    )!;
    old.child.kill('SIGTERM');
    await old.exited;
    await stack().startService('connection');
    await expectEndedCleanly('shutdown');
    await panel.waitForText(/The passkey request ended/);
    const confirm = await stack().api('POST', '/connect/passkey/confirm', { code });
    expect(confirm.status).to.equal(404);
    expect((await simLink(phone)).step).to.equal('failed');

    // A new link of the same account goes through.
    await scanGated(phone);
    await openWhatsAppWeb();
    await panel.waitForText(/The link waits for the passkey/);
    await panel.click('Use passkey');
    await panel.waitForText(/Compare the codes/);
    const fresh = (await passkeyNow()).body.data!.code;
    expect(fresh).to.not.equal(code);
    await stack().simApi('POST', `/accounts/${phone}/passkey/confirm`, { code: fresh });
    await panel.click('Confirm');
    expect(await stack().waitForStatus('connected', 90_000)).to.include({ phone });
  });

  it('When a plain Baileys socket (rc14, without the gateway’s passkey support) links a gated account, then it drops the request, its QR keeps turning and it ends with 408', async () => {
    const phone = await gatedAccount('qr');
    // Baileys as npm ships it: the gateway's patch adds one listener to the socket (the QR timer
    // stops when the passkey request comes), taken off again here; no passkey handling is added.
    const device = new TestDevice(stack().simulator.info, { socketConfig: { qrTimeout: 1500 } });
    const sock = device.connect();
    sock.ws.removeAllListeners('CB:notification,type:passkey_prologue_request');
    try {
      const qr = await device.nextQr();
      const scan = await stack().simApi<{ passkey?: SimLink }>('POST', '/phone/link', { qr, phone });
      expect(scan.passkey?.step).to.equal('awaiting-assertion');
      const qrs = new Set<string>();
      const closed = device.waitForUpdate((u) => {
        if (u.qr) qrs.add(u.qr);
        return u.connection === 'close';
      }, 30_000);
      await closed;
      const close = device.closes.at(-1)!;
      expect(close).to.deep.equal({ statusCode: 408, message: 'QR refs attempts ended' });
      expect(qrs.size, 'the QR kept turning after the passkey request').to.be.greaterThan(0);
      expect(device.auth.creds.me, 'never linked').to.equal(undefined);
      const link = await simLink(phone);
      expect(link).to.include({ step: 'failed', rejections: 0, error: 'the waiting device disconnected' });
    } finally {
      await device.end();
    }
  });
});
