import type {
  Metrics,
  UsernameLookup,
  UsernameLookupResult,
  UsernameResolution,
  UsernameResolveBody,
} from '@mgw/contracts';
import type { ContactIdentities, ContactLookupCap, SessionStore } from '@mgw/store';
import { HOLDER_WAIT_SECONDS, askHolder, type DeviceHolder, type HolderFailure } from '../holder/index.js';

/** The longest one more username lookup may take at the holder (its usync query and what it keeps). */
const LOOKUP_BUDGET_SECONDS = 20;

export interface UsernameLookupDeps {
  /** The device's holder: it asks WhatsApp and keeps the answers in the device's map. */
  holder: DeviceHolder;
  /** The device's daily lookup cap (CONTACT_LOOKUPS_PER_DAY): a username lookup counts as one. */
  cap: Pick<ContactLookupCap, 'take'>;
  lookups: Metrics['contactLookups'];
}

export interface ResolveUsernameDeps extends UsernameLookupDeps {
  sessions: Pick<SessionStore, 'get'>;
  /** The contact as the device's map knows it once the holder kept the answer (its phone, its username). */
  identities: Pick<ContactIdentities, 'resolve'>;
}

/** The daily lookup cap is used up. */
export type LookupsCapped = { ok: false; reason: 'capped'; resetInSeconds: number };

/** How a resolution went. */
export type ResolveUsernameOutcome = { ok: true; data: UsernameResolution } | LookupsCapped | HolderFailure;

/**
 * Asks the device's holder to look `lookups` up at WhatsApp (each one usync query: libs/messenger
 * usernames.ts), each counted against the device's daily lookup cap — all or none, as the number
 * check counts its numbers. The holder keeps what WhatsApp said in the device's map (a found
 * username with its LID; one no account has forgotten). The PIN goes in the command and nowhere else.
 */
export async function lookUpUsernames(
  deps: UsernameLookupDeps,
  deviceId: string,
  lookups: { username: string; pin?: string }[],
): Promise<{ ok: true; data: UsernameLookup[] } | LookupsCapped | HolderFailure> {
  const allowance = await deps.cap.take(deviceId, lookups.length);
  if (!allowance.granted) {
    deps.lookups.inc({ outcome: 'capped' }, lookups.length);
    return { ok: false, reason: 'capped', resetInSeconds: allowance.resetInSeconds };
  }
  deps.lookups.inc({ outcome: 'looked_up' }, lookups.length);
  const asked = await askHolder<UsernameLookupResult>(
    deps.holder,
    deviceId,
    { type: 'account-usernames-resolve', lookups },
    // The usual wait holds one lookup; each further one (a /send naming several) adds its budget.
    { wait: HOLDER_WAIT_SECONDS + (lookups.length - 1) * LOOKUP_BUDGET_SECONDS },
  );
  if (!asked.ok) return asked;
  return { ok: true, data: asked.data.usernames };
}

/**
 * POST /contacts/username: who has the username, asked of WhatsApp now (with its PIN when one was
 * given) — `found` with the contact (its LID, its phone when WhatsApp or the device's map knows it,
 * the username), `pin_required` (no PIN, or a wrong one, for a username guarded by one) or
 * `not_found`. **Choice:** always asked, never answered from the device's map: a resolution is how
 * a client learns who has a username *now* (a username can be released and taken by another
 * account), and what it learns is kept for the sends that name it.
 */
export async function resolveUsername(
  deps: ResolveUsernameDeps,
  deviceId: string,
  body: UsernameResolveBody,
): Promise<ResolveUsernameOutcome> {
  const session = await deps.sessions.get(deviceId);
  if (session.status !== 'connected') return { ok: false, reason: 'no_device' };
  const looked = await lookUpUsernames(deps, deviceId, [
    { username: body.username, ...(body.pin !== undefined ? { pin: body.pin } : {}) },
  ]);
  if (!looked.ok) return looked;
  const found = looked.data[0];
  if (!found) return { ok: false, reason: 'failed' };
  const { username, status } = found;
  if (status !== 'found') return { ok: true, data: { username, status } };
  const known = found.lid ? await deps.identities.resolve(deviceId, found.lid) : {};
  const contact = {
    ...known,
    ...(found.phone ? { phone: found.phone } : {}),
    ...(found.lid ? { lid: found.lid } : {}),
    username,
  };
  return { ok: true, data: { username, status, contact } };
}
