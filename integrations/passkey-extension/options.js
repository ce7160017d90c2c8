/*
 * The settings page: the gateway's address and the device's token, kept in chrome.storage.local
 * (which only this page and the service worker may read). Saving asks the browser for permission
 * to reach that one gateway (an optional host permission), and drops the permission of any
 * gateway saved before.
 */
import { WHATSAPP_WEB, checkToken, parseGatewayUrl } from './gateway.js';

const form = document.getElementById('settings');
const gatewayInput = document.getElementById('gateway');
const tokenInput = document.getElementById('token');
const result = document.getElementById('result');

const show = (kind, text) => {
  result.className = kind;
  result.textContent = text;
};

const STATUS_WORDS = {
  passkey_required: 'a passkey request waits: open web.whatsapp.com in this browser',
  passkey_expired: 'the last passkey request expired before it was answered',
  passkey_rejected: 'WhatsApp refused the last passkey assertion',
  passkey_no_continuation: 'WhatsApp never answered the last assertion',
  passkey_options_unavailable: 'WhatsApp did not say which passkey it wants',
  passkey_failed: 'a step of the last passkey link failed',
};

async function saved() {
  return chrome.storage.local.get(['gatewayUrl', 'token']);
}

async function check() {
  show('', 'Asking the gateway…');
  const a = await chrome.runtime.sendMessage({ kind: 'check' });
  if (!a?.configured) return show('error', 'Nothing is saved yet.');
  if (a.status === 200) {
    const why = a.reason ? ` (${STATUS_WORDS[a.reason] ?? a.reason.replace(/_/g, ' ')})` : '';
    return show('success', `The gateway answers: the device is ${a.deviceStatus}${why}.`);
  }
  if (a.status === 401 || a.status === 403)
    return show('error', `The gateway at ${a.gateway} refused the token (HTTP ${a.status}).`);
  show('error', a.error ?? `The gateway answered HTTP ${a.status}.`);
}

async function load() {
  const { gatewayUrl, token } = await saved();
  if (typeof gatewayUrl === 'string') gatewayInput.value = gatewayUrl;
  tokenInput.placeholder = token ? 'Saved (type a new one to replace it)' : 'mgw_…';
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  let gateway;
  try {
    gateway = parseGatewayUrl(gatewayInput.value);
  } catch (err) {
    return show('error', err.message);
  }
  // Asked first, while the click still counts as the operator's: the browser asks them.
  const granted = await chrome.permissions.request({ origins: [gateway.pattern] }).catch(() => false);
  if (!granted)
    return show('error', `Not saved: the extension needs the permission to reach ${gateway.origin}.`);
  const before = await saved();
  let token;
  try {
    // A token saved for another gateway is never sent to this one: it must be typed again.
    const keep = !tokenInput.value && before.token && before.gatewayUrl === gateway.base;
    token = keep ? before.token : checkToken(tokenInput.value);
  } catch (err) {
    return show('error', err.message);
  }
  await chrome.storage.local.set({ gatewayUrl: gateway.base, token });
  // Only the gateway saved now may be reached.
  const { origins = [] } = await chrome.permissions.getAll();
  const others = origins.filter((o) => o !== gateway.pattern && o !== `${WHATSAPP_WEB}/*`);
  if (others.length > 0) await chrome.permissions.remove({ origins: others }).catch(() => false);
  tokenInput.value = '';
  gatewayInput.value = gateway.base;
  tokenInput.placeholder = 'Saved (type a new one to replace it)';
  await check();
});

document.getElementById('check').addEventListener('click', () => void check());

document.getElementById('forget').addEventListener('click', async () => {
  const { gatewayUrl } = await saved();
  await chrome.storage.local.remove(['gatewayUrl', 'token']);
  try {
    if (gatewayUrl) await chrome.permissions.remove({ origins: [parseGatewayUrl(gatewayUrl).pattern] });
  } catch {
    // an address saved by an older version: nothing to remove
  }
  gatewayInput.value = '';
  tokenInput.value = '';
  tokenInput.placeholder = 'mgw_…';
  show('', 'Forgotten: the extension knows no gateway and no token.');
});

void load();
