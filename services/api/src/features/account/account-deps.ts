import type { AccountCommand, AccountCommandResult, AccountProfile } from '@mgw/contracts';
import type { Blocklist, SessionStore } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import {
  askHolder,
  type DeviceHolder,
  type HolderAsk,
  type HolderOutcome,
  type Unaddressed,
  type HolderFailure,
} from '../holder/index.js';
import type { ContactLookups } from './contact-lookups.js';

/**
 * The account (docs/account.md): what needs the WhatsApp socket is asked of the sender holding
 * the device (a device command, one round trip to it and on to WhatsApp); the blocklist is read
 * from Redis (kept there by that sender), as GET /status reads the session.
 */
export type AccountDeps = Pick<ApiServices, 'encryption'> &
  ContactLookups & {
    /** The device's holder, asked with the session check. */
    holder: DeviceHolder;
    sessions: Pick<SessionStore, 'get'>;
    blocklist: Pick<Blocklist, 'list'>;
    redis: AccountRedis;
  };

/**
 * What the account's use cases do with Redis themselves: the presence fields of the session record
 * (read-presence.ts, set-presence.ts) and a photo's handoff (set-photo.ts).
 */
export interface AccountRedis {
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  hset(key: string, values: Record<string, string>): Promise<number>;
  set(key: string, value: Buffer, expiry: 'EX', seconds: number): Promise<unknown>;
  del(key: string): Promise<number>;
}

export type AccountAsk = Unaddressed<AccountCommand>;

/** How an ask of the holder failed. */
export type { HolderFailure };

/** No account is linked (logged out, or never). */
export type NotLinked = { ok: false; reason: 'not_linked' };

/** The profile, as the routes that change it answer it. */
export interface ProfileData {
  profile: AccountProfile;
}

/**
 * Asks the holder for an account command (it waits the default: one to three WhatsApp queries,
 * or a photo upload).
 */
export function askAccount(
  deps: Pick<AccountDeps, 'holder'>,
  deviceId: string,
  command: AccountAsk,
  ask?: HolderAsk,
): Promise<HolderOutcome<AccountCommandResult>> {
  return askHolder<AccountCommandResult>(deps.holder, deviceId, command, ask);
}

/** Asks for a command the holder answers with the account's profile; answers that profile. */
export async function askProfile(
  deps: Pick<AccountDeps, 'holder'>,
  deviceId: string,
  command: AccountAsk,
  ask?: HolderAsk,
): Promise<HolderOutcome<ProfileData>> {
  const asked = await askAccount(deps, deviceId, command, ask);
  return asked.ok ? { ok: true, data: { profile: (asked.data as ProfileData).profile } } : asked;
}
