import {
  MAX_SEND_USERNAME_LOOKUPS,
  USERNAME_ERRORS,
  usernameOfAddress,
  type SendBody,
  type SendTo,
  type UsernameLookup,
  type ValidationDetail,
} from '@mgw/contracts';
import type { ContactUsernames } from '@mgw/store';
import { lookUpUsernames, type UsernameLookupDeps } from '../contacts/index.js';
import { invalid, type Refusal } from '../../enqueue/refusal.js';

export interface UsernameRecipientDeps extends UsernameLookupDeps {
  /** The usernames the device resolved or met (its phone <-> LID map). */
  usernames: Pick<ContactUsernames, 'lidsOf'>;
}

/** A `to` entry naming a username, where it is in the request. */
interface Named {
  index: number;
  username: string;
}

/**
 * A /send whose `to` names usernames (`@alice.shop`), with each one replaced by its LID: the
 * message is accepted to the account that has the username now, and everything after (opt-outs,
 * caps, receipts, events) goes by that LID, whose `contact` carries the username. See
 * docs/usernames.md for why the username is resolved when the request is accepted, not when the
 * message is sent.
 *
 * A username the device resolved before (POST /contacts/username) or met (it wrote, or a contact
 * named it) is read from the device's map: no lookup. Any other is asked of WhatsApp without a PIN
 * (at most MAX_SEND_USERNAME_LOOKUPS per request, each one lookup of the daily cap). One that no
 * account has, or that is guarded by a PIN and was never resolved with it, refuses the request
 * (422 `username_not_found` / `username_pin_required`, naming the entries): nothing is queued.
 */
export function withUsernamesResolved(
  deps: UsernameRecipientDeps | undefined,
  deviceId: string,
  body: SendBody,
): SendBody | Refusal | Promise<SendBody | Refusal> {
  const isList = Array.isArray(body.to);
  const entries = isList ? (body.to as SendTo[]) : [body.to as SendTo];
  const named: Named[] = [];
  entries.forEach((to, index) => {
    const username = typeof to === 'string' ? usernameOfAddress(to) : undefined;
    if (username) named.push({ index, username });
  });
  // Almost no /send names one: its body as it came, with no await.
  if (named.length === 0) return body;
  return resolveNamed(deps, deviceId, body, entries, named);
}

async function resolveNamed(
  deps: UsernameRecipientDeps | undefined,
  deviceId: string,
  body: SendBody,
  entries: SendTo[],
  named: Named[],
): Promise<SendBody | Refusal> {
  const isList = Array.isArray(body.to);
  const at = (n: Named) => (isList ? ['to', n.index] : ['to']);
  if (!deps)
    return invalid(named.map((n) => ({ path: at(n), message: 'a username cannot be sent to from here' })));
  const lids = await deps.usernames.lidsOf(
    deviceId,
    named.map((n) => n.username),
  );
  const unknown = [...new Set(named.map((n) => n.username).filter((u) => !lids.has(u)))];
  if (unknown.length > MAX_SEND_USERNAME_LOOKUPS)
    return invalid([{ path: ['to'], message: `to ${USERNAME_ERRORS.tooManyUnresolved}` }]);
  if (unknown.length > 0) {
    const looked = await lookUpUsernames(
      deps,
      deviceId,
      unknown.map((username) => ({ username })),
    );
    if (!looked.ok) return lookupRefusal(looked);
    const answers = new Map<string, UsernameLookup>(looked.data.map((l) => [l.username, l]));
    const problems: ValidationDetail[] = [];
    let pinRequired = true;
    for (const n of named) {
      if (lids.has(n.username)) continue;
      const answer = answers.get(n.username);
      if (answer?.status === 'found' && answer.lid) lids.set(n.username, answer.lid);
      else {
        const needsPin = answer?.status === 'pin_required';
        pinRequired &&= needsPin;
        problems.push({
          path: at(n),
          message: needsPin
            ? `@${n.username}: username_pin_required (resolve it with its PIN: POST /contacts/username)`
            : `@${n.username}: username_not_found`,
        });
      }
    }
    if (problems.length)
      return { kind: 'refused', reason: 'username_unresolved', pinRequired, details: problems };
  }
  const to = entries.map((entry) => {
    const username = typeof entry === 'string' ? usernameOfAddress(entry) : undefined;
    return username ? lids.get(username)! : entry;
  });
  return { ...body, to: isList ? to : to[0]! };
}

/** A lookup that did not answer, as the request's refusal. */
function lookupRefusal(failed: Exclude<Awaited<ReturnType<typeof lookUpUsernames>>, { ok: true }>): Refusal {
  switch (failed.reason) {
    case 'capped':
      return { kind: 'refused', reason: 'rate_limited', retryAfterMs: failed.resetInSeconds * 1000 };
    case 'no_device':
      return { kind: 'refused', reason: 'no_device' };
    case 'timeout':
      return { kind: 'refused', reason: 'username_lookup_failed', timedOut: true };
    default:
      return { kind: 'refused', reason: 'username_lookup_failed', timedOut: false };
  }
}

/** What a /send needs to resolve usernames: the lookup's and the device's map. */
export function usernameRecipientDeps(
  lookup: UsernameLookupDeps,
  usernames: ContactUsernames,
): UsernameRecipientDeps {
  return { ...lookup, usernames };
}
