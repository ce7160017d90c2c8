import type { SimGroups } from './groups.js';
import type { DirectoryContext } from './sim-context.js';
import { normalizePhone, type SimUser } from './directory.js';
import { SimError } from './sim-error.js';

/** What a number change needs of the simulator. */
export interface NumberChangesContext extends DirectoryContext {
  readonly groups: SimGroups;
  /** Counts what may have changed the state (persistence.ts). */
  changes: number;
}

/**
 * A contact changes its number: the account (and its LID) goes on under the new number, and the
 * old number is free — a later lookup finds nobody, or (unknown numbers created) a new account
 * with a new LID: "the number was registered again". Nothing is pushed to the accounts that knew
 * the contact: `POST /contacts/:phone/lid-mapping` tells one of them the new pair, as WhatsApp does
 * with a `lid-mapping` notification. What a client then does with the pairs it held is the
 * client's: whatsmeow 563bcaa0 (May 2026) replaces an entry when either half changes.
 *
 * Only a contact: an account with linked devices, or a member of a simulated group (the groups'
 * rosters are by number), is refused (409).
 */
export function changeNumber(sim: NumberChangesContext, phone: string, newPhone: string): SimUser {
  const user = sim.directory.get(phone);
  if (!user) throw new SimError(`${phone} is not a contact`, 404);
  const to = normalizePhone(newPhone);
  if (!to) throw new SimError('phone is required', 400);
  if (to === user.phone) return user;
  if (sim.directory.get(to)) throw new SimError(`${to} is someone else's number`, 409);
  if (user.devices.size > 0) throw new SimError(`${user.phone} is an account with linked devices`, 409);
  if (sim.groups.ofMember(user.phone).length > 0)
    throw new SimError(`${user.phone} is in a simulated group`, 409);
  sim.directory.renumber(user, to);
  sim.changes++;
  return user;
}
