/*
 * The extension's service worker: the only part that knows the device token and the only part
 * that calls the gateway. It answers two kinds of callers, and nobody else:
 *
 * - the content script on https://web.whatsapp.com (top frame only): the device's pending passkey
 *   request (`GET /connect/passkey`), the assertion (`POST /connect/passkey`) and the operator's
 *   confirmation of the code (`POST /connect/passkey/confirm`);
 * - the extension's own settings page: a check of the saved settings (`GET /status`).
 *
 * Every request goes to the configured gateway's origin only (no redirect followed, no cookie,
 * no referrer), with the token in its Authorization header.
 */
import { API_PREFIX, WHATSAPP_WEB, parseGatewayUrl } from './gateway.js';

/** The API waits up to 20 s for the replica that runs the pairing: a little more than that. */
const REQUEST_TIMEOUT_MS = 30_000;

// The token is for this worker and the settings page: content scripts may not read the storage.
const restrictStorage = () =>
  chrome.storage.local.setAccessLevel({ accessLevel: 'TRUSTED_CONTEXTS' }).catch(() => undefined);
chrome.runtime.onInstalled.addListener(restrictStorage);
chrome.runtime.onStartup.addListener(restrictStorage);
void restrictStorage();

chrome.action.onClicked.addListener(() => void chrome.runtime.openOptionsPage());

/** The saved gateway and token, or undefined while the extension is not set up. */
async function settings() {
  const { gatewayUrl, token } = await chrome.storage.local.get(['gatewayUrl', 'token']);
  if (typeof gatewayUrl !== 'string' || typeof token !== 'string' || !token) return undefined;
  try {
    return { gateway: parseGatewayUrl(gatewayUrl), token };
  } catch {
    return undefined;
  }
}

/**
 * One call to the gateway's public API. Answers `{ configured, gateway, status, body }` (`status`
 * 0 when the gateway could not be reached) or `{ configured: false }`.
 */
async function callGateway(method, path, json) {
  const saved = await settings();
  if (!saved) return { configured: false };
  const { gateway, token } = saved;
  const answer = { configured: true, gateway: gateway.origin };
  if (!(await chrome.permissions.contains({ origins: [gateway.pattern] })))
    return {
      ...answer,
      status: 0,
      error: `This extension may not reach ${gateway.origin}: save its settings again.`,
    };
  const url = new URL(`${gateway.base}${API_PREFIX}${path}`);
  // Built from constants under the saved base: never anywhere else.
  if (url.origin !== gateway.origin) throw new Error('refusing a request outside the gateway');
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: {
        accept: 'application/json',
        authorization: `Bearer ${token}`,
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
      credentials: 'omit',
      redirect: 'error',
      referrerPolicy: 'no-referrer',
      cache: 'no-store',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch {
    return { ...answer, status: 0, error: `The gateway at ${gateway.origin} cannot be reached.` };
  }
  const body = await res.json().catch(() => ({}));
  return { ...answer, status: res.status, body: body && typeof body === 'object' ? body : {} };
}

/** The gateway's answer as the content script sees it: only what the passkey routes answer. */
function passkeyAnswer(a) {
  const body = a.body ?? {};
  return {
    configured: a.configured,
    gateway: a.gateway,
    status: a.status,
    ...(a.error ? { error: a.error } : {}),
    ...(typeof body.error === 'string' ? { error: body.error } : {}),
    ...(Array.isArray(body.details) ? { details: body.details.map((d) => String(d?.message ?? '')) } : {}),
    ...(typeof body.step === 'string' ? { step: body.step } : {}),
    ...(typeof body.resetIn === 'number' ? { resetIn: body.resetIn } : {}),
    ...(body.data && typeof body.data === 'object' ? { passkey: body.data } : {}),
  };
}

/** What the assertion may carry (PublicKeyCredential.toJSON()): nothing else is forwarded. */
function assertionOf(value) {
  const a = value && typeof value === 'object' ? value : {};
  const r = a.response && typeof a.response === 'object' ? a.response : {};
  const str = (v) => (typeof v === 'string' ? v : undefined);
  return {
    id: str(a.id),
    rawId: str(a.rawId),
    type: 'public-key',
    response: {
      clientDataJSON: str(r.clientDataJSON),
      authenticatorData: str(r.authenticatorData),
      signature: str(r.signature),
      userHandle: str(r.userHandle) ?? null,
    },
    ...(typeof a.authenticatorAttachment === 'string'
      ? { authenticatorAttachment: a.authenticatorAttachment }
      : {}),
    clientExtensionResults: {},
  };
}

const originOf = (sender) => {
  try {
    return sender.origin ?? new URL(sender.url).origin;
  } catch {
    return '';
  }
};

/** WhatsApp Web's top frame, through this extension's content script. */
const fromWhatsAppWeb = (sender) =>
  sender.id === chrome.runtime.id &&
  !!sender.tab &&
  sender.frameId === 0 &&
  originOf(sender) === WHATSAPP_WEB;

/** The extension's own settings page. */
const fromSettings = (sender) =>
  sender.id === chrome.runtime.id && originOf(sender) === new URL(chrome.runtime.getURL('/')).origin;

async function handle(message, sender) {
  const kind = message?.kind;
  if (fromWhatsAppWeb(sender)) {
    if (kind === 'pending') return passkeyAnswer(await callGateway('GET', '/connect/passkey'));
    if (kind === 'assert')
      return passkeyAnswer(
        await callGateway('POST', '/connect/passkey', { assertion: assertionOf(message.assertion) }),
      );
    if (kind === 'confirm' && typeof message.code === 'string')
      return passkeyAnswer(await callGateway('POST', '/connect/passkey/confirm', { code: message.code }));
    // Why a request shown on the page ended: the device's disconnect reason, nothing else of its status.
    if (kind === 'ended') {
      const a = await callGateway('GET', '/status');
      return typeof a.body?.reason === 'string' ? { reason: a.body.reason } : {};
    }
  } else if (fromSettings(sender) && kind === 'check') {
    const a = await callGateway('GET', '/status');
    const body = a.body ?? {};
    return {
      configured: a.configured,
      gateway: a.gateway,
      status: a.status,
      ...(a.error || typeof body.error === 'string' ? { error: a.error ?? body.error } : {}),
      ...(typeof body.status === 'string' ? { deviceStatus: body.status } : {}),
      ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
      ...(body.passkey && typeof body.passkey === 'object' ? { passkey: body.passkey } : {}),
    };
  }
  return { refused: true };
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  handle(message, sender).then(sendResponse, (err) =>
    sendResponse({ status: 0, error: err instanceof Error ? err.message : String(err) }),
  );
  return true;
});
