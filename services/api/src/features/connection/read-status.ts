import { PASSKEY_FAILURES, type PasskeyFailure } from '@mgw/contracts';
import { deviceHealth, sendingView, type SessionStore } from '@mgw/store';
import { passkeyLinkRuns } from './passkey.js';

const isPasskeyFailure = (reason: string | undefined): reason is PasskeyFailure =>
  (PASSKEY_FAILURES as readonly string[]).includes(reason ?? '');
import type { ApiServices } from '../../api-services.js';

/**
 * The device's status as GET /status answers it: the session record; the account's phone, name
 * and picture only while connected; why it is connecting when its proxy is the cause; and, for a
 * linked device, its usage of the sending policy and its health.
 */
export async function readStatus(
  s: Pick<ApiServices, 'redis' | 'config'> & { sessions: Pick<SessionStore, 'get'> },
  deviceId: string,
): Promise<Record<string, unknown>> {
  const session = await s.sessions.get(deviceId);
  const body: Record<string, unknown> = { success: true, status: session.status };
  if (session.status === 'connected') {
    for (const field of ['phone', 'name', 'profilePic'] as const) {
      if (session[field]) body[field] = session[field];
    }
  }
  // Beyond the spec's fields: why a device is connecting, when its proxy is the cause
  // (`proxy_unreachable`, `proxy_auth`, `proxy_refused`, `proxy_error`; docs/proxies.md).
  if (session.status === 'connecting' && session.lastDisconnectReason?.startsWith('proxy_'))
    body.reason = session.lastDisconnectReason;
  // A passkey-gated link (docs/passkeys.md): where it stands while it waits, how it ended after.
  if (
    session.status === 'connecting' &&
    session.passkeyStep &&
    session.passkeyExpiresAt &&
    (await passkeyLinkRuns(s.redis, deviceId))
  ) {
    body.reason = 'passkey_required';
    body.passkey = { step: session.passkeyStep, expiresAt: session.passkeyExpiresAt };
  }
  if (session.status === 'disconnected' && isPasskeyFailure(session.lastDisconnectReason))
    body.reason = session.lastDisconnectReason;
  // Beyond the spec's fields, for a linked device (connected or reconnecting): what the account
  // sent today against its caps, its pause while WhatsApp pushes back, and its health score — all
  // in `sending`, the one object beyond the spec, so the spec's fields stay as they are.
  if (session.status !== 'disconnected') {
    const now = Date.now();
    const view = await sendingView(s.redis, deviceId, s.config.sendPolicy, now);
    const health = await deviceHealth(s.redis, deviceId, s.config.sendPolicy, now, view);
    body.sending = { ...view, health };
  }
  return body;
}
