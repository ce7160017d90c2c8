import type { ContactIdentity } from '@mgw/contracts';
import type { AccountDeps, NotLinked } from './account-deps.js';

/**
 * GET /blocklist: the contacts the account blocked, from Redis like GET /status (the holder keeps
 * the set current: no WhatsApp query here). A device reconnecting still has its list.
 */
export async function listBlocklist(
  deps: Pick<AccountDeps, 'sessions' | 'blocklist'>,
  deviceId: string,
): Promise<{ ok: true; data: { total: number; contacts: ContactIdentity[] } } | NotLinked> {
  const session = await deps.sessions.get(deviceId);
  if (session.status === 'disconnected') return { ok: false, reason: 'not_linked' };
  const contacts = await deps.blocklist.list(deviceId);
  return { ok: true, data: { total: contacts.length, contacts } };
}
