import type { RedisClient } from '@mgw/common';
import type { DeviceCommandReply, UsernameLookup, UsernameLookupCommand } from '@mgw/contracts';
import { lookUpUsername, type DeviceSocket } from '@mgw/messenger';
import { ContactUsernames, type ContactIdentities } from '@mgw/store';

export interface UsernameLookupDeps {
  redis: RedisClient;
  identities: Pick<ContactIdentities, 'learn'>;
}

/**
 * POST /contacts/username and a /send to a username the device has not resolved, the holder's
 * half: each username asked of WhatsApp in turn (one usync query each, libs/messenger
 * usernames.ts), and what WhatsApp said remembered in the device's map — a username found with
 * its LID (and the LID's phone when told), a username no account has forgotten; one that needs
 * its PIN is left as it was (resolved with its PIN before, it stays). The PIN goes to WhatsApp and
 * nowhere else: not kept, not logged (nor is the username).
 */
export async function lookUpUsernames(
  conn: Pick<DeviceSocket, 'socket' | 'isOpen'>,
  cmd: UsernameLookupCommand,
  deps: UsernameLookupDeps,
): Promise<DeviceCommandReply> {
  const usernames: UsernameLookup[] = [];
  for (const { username, pin } of cmd.lookups) usernames.push(await lookUpUsername(conn, username, pin));
  const found = usernames.filter((u) => u.status === 'found' && u.lid);
  if (found.length) {
    await deps.identities.learn(
      cmd.deviceId,
      found.map((u) => ({ ...(u.phone ? { phone: u.phone } : {}), lid: u.lid })),
    );
    await new ContactUsernames(deps.redis).keep(
      cmd.deviceId,
      found.map((u) => ({ username: u.username, lid: u.lid! })),
    );
  }
  const gone = usernames.filter((u) => u.status === 'not_found').map((u) => u.username);
  if (gone.length) await new ContactUsernames(deps.redis).forget(cmd.deviceId, gone);
  return { ok: true, data: { usernames } };
}
