import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { PresenceEventData } from '@mgw/contracts';
import type { DeviceSocket, PresenceSeen } from '@mgw/messenger';
import { blocklistEntry, publishEvent, type Blocklist, type ContactIdentities } from '@mgw/store';

export interface AccountEventDeps {
  deviceId: string;
  redis: RedisClient;
  blocklist: Blocklist;
  identities: Pick<ContactIdentities, 'resolve'>;
  logger: Logger;
}

/** Presence reports remembered to drop repeats (the same contact, state and last seen again). */
const MAX_REMEMBERED = 1000;

/**
 * What the socket hears about the account itself: contacts' presence becomes `presence.update`
 * (through the event outbox, so webhooks, GET /events, streams and brokers get it), and the
 * blocklist the API checks sends against is kept current — replaced from WhatsApp's blocklist
 * query at every login, changed by WhatsApp's blocklist pushes (the phone blocked someone).
 */
export function wireAccountEvents(conn: DeviceSocket, deps: AccountEventDeps): void {
  const { deviceId, logger: log } = deps;
  const last = new Map<string, string>();
  conn.account.on('presence', (seen) => {
    const fingerprint = `${seen.presence} ${seen.lastSeen?.getTime() ?? ''} ${seen.groupJid ?? ''}`;
    if (last.get(seen.jid) === fingerprint) return;
    last.delete(seen.jid);
    last.set(seen.jid, fingerprint);
    if (last.size > MAX_REMEMBERED) last.delete(last.keys().next().value!);
    void publishPresence(deps, seen).catch((err: unknown) =>
      log.warn('presence not published', { err: serializeError(err) }),
    );
  });
  conn.account.on('blocklist', ({ jids, type }) => {
    const change =
      type === 'add' ? deps.blocklist.add(deviceId, jids) : deps.blocklist.remove(deviceId, jids);
    void change.catch((err: unknown) => log.warn('blocklist change not kept', { err: serializeError(err) }));
  });
  conn.on('loggedIn', () => {
    void conn.account
      .blocklist()
      .then((jids) => deps.blocklist.replace(deviceId, jids))
      .then((dropped) => {
        if (dropped > 0) log.warn('blocklist over its bound: entries not kept', { dropped });
      })
      .catch((err: unknown) => log.warn('blocklist not read', { err: serializeError(err) }));
  });
}

async function publishPresence(deps: AccountEventDeps, seen: PresenceSeen): Promise<void> {
  const address = blocklistEntry(seen.jid);
  if (!address) return;
  const contact = await deps.identities.resolve(deps.deviceId, address);
  const data: Omit<PresenceEventData, 'deviceId'> = {
    contact,
    presence: seen.presence,
    ...(seen.lastSeen ? { lastSeen: seen.lastSeen.toISOString() } : {}),
    ...(seen.groupJid ? { chat: { type: 'group' as const, id: seen.groupJid } } : {}),
    at: new Date().toISOString(),
  };
  await publishEvent(deps.redis, deps.deviceId, 'presence.update', data);
}
