/*
 * Where the gateway is, as the operator typed it: shared by the service worker (which alone calls
 * the gateway) and the options page (which asks for the permission to reach it).
 */

/** The public API's prefix under the gateway's base URL. */
export const API_PREFIX = '/api/messenger/v1';

/** The only page whose requests the service worker answers: WhatsApp Web. */
export const WHATSAPP_WEB = 'https://web.whatsapp.com';

const LOOPBACK = /^(localhost|127\.0\.0\.1|\[::1\])$/;

/**
 * The gateway's base URL typed by the operator (e.g. `https://gateway.example.com` or
 * `https://example.com/mgw`), checked: http or https, no user name, query or fragment, and plain
 * http only on this machine (a device token must not cross a network in the clear). Answers the
 * base (no trailing slash), its origin and the host permission that reaches it; throws an Error
 * with a plain message otherwise.
 */
export function parseGatewayUrl(text) {
  let url;
  try {
    url = new URL(String(text).trim());
  } catch {
    throw new Error('Enter the gateway’s address, e.g. https://gateway.example.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error('The gateway’s address starts with https:// (or http:// on this machine)');
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname))
    throw new Error(
      'Use https:// for a gateway on another machine: the device token must not travel in the clear',
    );
  if (url.username || url.password) throw new Error('Leave the user name and password out of the address');
  if (url.search || url.hash)
    throw new Error('Leave the query (?…) and the fragment (#…) out of the address');
  const path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith(API_PREFIX)) throw new Error(`Enter the gateway’s address without ${API_PREFIX}`);
  return { base: `${url.origin}${path}`, origin: url.origin, pattern: `${url.origin}/*` };
}

/** A device token as the gateway makes them: printable, no spaces. */
export function checkToken(text) {
  const token = String(text).trim();
  if (!/^[\x21-\x7e]{16,512}$/.test(token)) throw new Error('Paste the device’s API token (mgw_…)');
  return token;
}
