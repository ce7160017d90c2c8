import { keys, type AccountPresence } from '@mgw/contracts';
import type { AccountDeps } from './account-deps.js';

/** The account's own presence as the admin API answers it. */
export interface PresenceView {
  presence: AccountPresence;
  /** When PUT /presence set it, during the current connection; absent: the gateway's default. */
  setAt?: string;
}

/**
 * The account's presence, from the session record (set-presence.ts writes it there): what the last
 * PUT /presence set, if it did so during the current connection, else `unavailable` — the gateway
 * connects the account offline, so a connection that started since (a reconnection, a failover),
 * or none at all, shows it offline. Nothing is asked of WhatsApp.
 */
export async function readPresence(
  deps: Pick<AccountDeps, 'redis'>,
  deviceId: string,
): Promise<PresenceView> {
  const [status, connectedAt, presence, setAt] = await deps.redis.hmget(
    keys.session(deviceId),
    'status',
    'connectedAt',
    'presence',
    'presenceSetAt',
  );
  const current =
    status === 'connected' &&
    (presence === 'available' || presence === 'unavailable') &&
    !!setAt &&
    (!connectedAt || setAt >= connectedAt);
  return current ? { presence, setAt } : { presence: 'unavailable' };
}
