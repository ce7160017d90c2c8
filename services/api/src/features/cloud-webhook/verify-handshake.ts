import { CLOUD_LIMITS } from '@mgw/contracts';
import type { CloudDeviceStore } from '@mgw/store';

/**
 * What Meta's challenge may be: it sends a number; a short token of letters, digits, `-` and `_`
 * is taken too. Nothing else is ever echoed, so the answer can carry no markup.
 */
export const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export type HandshakeOutcome = { ok: true; challenge: string } | { ok: false };

/**
 * Meta's verification request (GET with `hub.mode=subscribe`, `hub.verify_token`, `hub.challenge`;
 * https://developers.facebook.com/docs/graph-api/webhooks/getting-started): answered with the
 * challenge when the token is a cloud device's verify token. The handshake names no number, so
 * any cloud device's token subscribes the install's one endpoint; what arrives there is checked
 * per number (its app secret) anyway. Every parameter must be one string (a repeated one is refused).
 */
export async function verifyHandshake(
  devices: Pick<CloudDeviceStore, 'devicesOfVerifyToken'>,
  query: Record<string, unknown>,
): Promise<HandshakeOutcome> {
  const mode = query['hub.mode'];
  const token = query['hub.verify_token'];
  const challenge = query['hub.challenge'];
  if (mode !== 'subscribe' || typeof challenge !== 'string' || !CHALLENGE_PATTERN.test(challenge))
    return { ok: false };
  if (typeof token !== 'string' || token === '' || token.length > CLOUD_LIMITS.verifyToken)
    return { ok: false };
  const devicesOfToken = await devices.devicesOfVerifyToken(token);
  return devicesOfToken.length > 0 ? { ok: true, challenge } : { ok: false };
}
