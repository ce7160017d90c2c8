import { keys, type AccountCommandResult, type AccountPresence } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askAccount, type AccountDeps } from './account-deps.js';

/**
 * PUT /presence: the account shown available or unavailable to its contacts (WhatsApp needs a
 * name for it: the holder answers `no-name` without one). Once WhatsApp has it, the presence and
 * when it was set go on the device's session record (`presence`, `presenceSetAt`), which the
 * admin API's GET /devices/:deviceId/presence reads (read-presence.ts).
 */
export async function setPresence(
  deps: Pick<AccountDeps, 'holder' | 'redis'>,
  deviceId: string,
  presence: AccountPresence,
): Promise<HolderOutcome<AccountCommandResult>> {
  const outcome = await askAccount(deps, deviceId, { type: 'account-presence-set', presence });
  if (outcome.ok)
    await deps.redis.hset(keys.session(deviceId), { presence, presenceSetAt: new Date().toISOString() });
  return outcome;
}
