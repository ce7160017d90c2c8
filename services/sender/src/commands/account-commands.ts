import type { Agent } from 'node:http';
import {
  OutboundRefusedError,
  OutboundTooLargeError,
  createOutboundClient,
  serializeError,
  type Logger,
  type OutboundConfig,
  type RedisClient,
} from '@mgw/common';
import {
  ACCOUNT_COMMAND_ERRORS as E,
  PROFILE_LIMITS,
  keys,
  photoTypeOf,
  type AccountCommand,
  type ContactIdentity,
  type DeviceCommandReply,
  type Metrics,
  isLidAddress,
} from '@mgw/contracts';
import { PhotoRefusedError, whatsappErrorCode, type DeviceSocket, type MessageSender } from '@mgw/messenger';
import {
  storageContext,
  type Blocklist,
  type ContactIdentities,
  type Sealer,
  type SessionStore,
} from '@mgw/store';
import { lookUpUsernames } from './username-lookups.js';

/** How long the holder waits for its socket to open before it answers that it cannot. */
const OPEN_WAIT_MS = 5_000;

/** Fetches a profile photo URL (the guarded outbound client, at most PROFILE_LIMITS.photoBytes). */
export type PhotoFetcher = (url: string, via?: Agent) => Promise<Buffer>;

export function createPhotoFetcher(opts: {
  outbound: OutboundConfig;
  timeoutMs: number;
  ca?: string;
}): PhotoFetcher {
  const client = createOutboundClient({
    allowList: opts.outbound.allowList,
    timeoutMs: opts.timeoutMs,
    maxBytes: PROFILE_LIMITS.photoBytes,
    userAgent: 'messenger-gateway',
    ...(opts.ca ? { ca: opts.ca } : {}),
  });
  return async (url, via) => {
    const res = await client.fetch(url, via ? { via } : {});
    if (res.status < 200 || res.status > 299) throw new Error(`the photo URL answered ${res.status}`);
    return res.body;
  };
}

export interface AccountCommandDeps {
  redis: RedisClient;
  sealer: Sealer;
  fetchPhoto: PhotoFetcher;
  blocklist: Blocklist;
  identities: Pick<ContactIdentities, 'knowsLid' | 'learn' | 'resolve'>;
  sessions: Pick<SessionStore, 'updateAccount'>;
  metrics: Metrics;
  logger: Logger;
}

/** The device's parts an account command uses. */
export interface AccountDevice {
  conn: DeviceSocket;
  sender: Pick<MessageSender, 'known' | 'lookupMany'>;
}

/** A command's failure with the reply's error (no WhatsApp call follows). */
class Refused extends Error {
  constructor(readonly error: string) {
    super(error);
  }
}

/**
 * The account routes, the holder's half: profile (name, about, photo), presence, a contact's
 * profile and presence, block and unblock, username lookups (username-lookups.ts), through the
 * device's socket. A refusal by WhatsApp is
 * `{ ok: false, error }` with its kind (`not-found`, …) and nothing else (no numbers in logs).
 */
export async function runAccountCommand(
  device: AccountDevice,
  cmd: AccountCommand,
  deps: AccountCommandDeps,
): Promise<DeviceCommandReply> {
  const reply = await answer(device, cmd, deps).catch((err: unknown): DeviceCommandReply => {
    if (err instanceof Refused) return { ok: false, error: err.error };
    if (err instanceof PhotoRefusedError) return { ok: false, error: E.photoNotImage };
    const status = whatsappErrorCode(err);
    deps.logger.warn('account request failed', { type: cmd.type, status, err: serializeError(err) });
    return { ok: false, error: status === 404 ? E.notFound : 'failed' };
  });
  deps.metrics.accountCommands.inc({ type: cmd.type, outcome: reply.ok ? 'ok' : 'failed' });
  return reply;
}

async function answer(
  device: AccountDevice,
  cmd: AccountCommand,
  deps: AccountCommandDeps,
): Promise<DeviceCommandReply> {
  const { conn } = device;
  if (!(await conn.waitForOpen(OPEN_WAIT_MS))) return { ok: false, error: 'not-connected' };
  const account = conn.account;
  switch (cmd.type) {
    case 'account-profile-get':
      return { ok: true, data: { profile: await account.profile() } };
    case 'account-profile-set': {
      if (cmd.about !== undefined) await account.setAbout(cmd.about);
      // The session record (GET /status) follows through the socket's `name` event.
      if (cmd.name !== undefined) account.setName(cmd.name);
      return { ok: true, data: { profile: await account.profile() } };
    }
    case 'account-photo-set': {
      const bytes = await photoBytes(conn, cmd, deps);
      if (bytes.length > PROFILE_LIMITS.photoBytes) throw new Refused(E.photoTooLarge);
      if (!photoTypeOf(bytes)) throw new Refused(E.photoNotImage);
      await account.setPhoto(bytes);
      const profile = await account.profile();
      await deps.sessions.updateAccount(cmd.deviceId, { profilePic: profile.pictureUrl ?? null });
      return { ok: true, data: { profile } };
    }
    case 'account-photo-remove': {
      await account.removePhoto();
      await deps.sessions.updateAccount(cmd.deviceId, { profilePic: null });
      return { ok: true, data: { profile: await account.profile() } };
    }
    case 'account-contact-profile': {
      const { jid, contact } = await resolve(device, cmd.deviceId, cmd.address, deps);
      const found = await account.contactProfile(jid);
      return {
        ok: true,
        data: {
          contactProfile: {
            contact,
            ...(found.about ? { about: found.about.text } : {}),
            ...(found.about?.setAt ? { aboutSetAt: found.about.setAt.toISOString() } : {}),
            ...(found.pictureUrl ? { pictureUrl: found.pictureUrl } : {}),
            ...(found.business ? { business: found.business } : {}),
          },
        },
      };
    }
    case 'account-presence-set':
      if (!(await account.setPresence(cmd.presence))) throw new Refused(E.noName);
      return { ok: true, data: { presence: cmd.presence } };
    case 'account-presence-subscribe': {
      const { jid, contact } = await resolve(device, cmd.deviceId, cmd.address, deps);
      await account.subscribe(jid);
      return { ok: true, data: { subscribed: true, contact } };
    }
    case 'account-usernames-resolve':
      return lookUpUsernames(conn, cmd, deps);
    case 'account-block': {
      const { jid, contact } = await resolve(device, cmd.deviceId, cmd.address, deps);
      await account.block(jid, cmd.action);
      // Known at once on the API side (WhatsApp pushes the change only to the other devices).
      const entries = [contact.lid, contact.phone].filter((e): e is string => !!e);
      if (cmd.action === 'block')
        await deps.blocklist.add(cmd.deviceId, contact.lid ? [contact.lid] : entries);
      else await deps.blocklist.remove(cmd.deviceId, entries);
      return { ok: true, data: { blocked: cmd.action === 'block', contact } };
    }
  }
}

/**
 * The JID of a contact the route named: a number must be on WhatsApp (the device's contact cache,
 * else one lookup), a LID one the device has met. Anything else is "not found" (404).
 */
async function resolve(
  device: AccountDevice,
  deviceId: string,
  address: string,
  deps: AccountCommandDeps,
): Promise<{ jid: string; contact: ContactIdentity }> {
  if (isLidAddress(address)) {
    // A LID met before, or one WhatsApp named on the blocklist (a block made on the phone).
    const known =
      (await deps.identities.knowsLid(deviceId, address)) ||
      (await deps.blocklist.isBlocked(deviceId, address));
    if (!known) throw new Refused(E.notFound);
    return { jid: address, contact: await deps.identities.resolve(deviceId, address) };
  }
  const answer =
    (await device.sender.known(address)) ?? (await device.sender.lookupMany([address])).get(address);
  if (!answer?.onWhatsApp || !answer.jid) throw new Refused(E.notFound);
  const contact: ContactIdentity = { phone: address, ...(answer.lid ? { lid: answer.lid } : {}) };
  if (contact.lid) await deps.identities.learn(deviceId, [contact]);
  return { jid: answer.jid, contact };
}

/** The photo's bytes: from the API's hand-off key (taken once), or fetched from its URL. */
async function photoBytes(
  conn: DeviceSocket,
  cmd: Extract<AccountCommand, { type: 'account-photo-set' }>,
  deps: AccountCommandDeps,
): Promise<Buffer> {
  if ('url' in cmd.source) {
    try {
      // Through the device's proxy, like every connection made for the device.
      return await deps.fetchPhoto(cmd.source.url, conn.proxyAgent);
    } catch (err) {
      if (err instanceof OutboundTooLargeError) throw new Refused(E.photoTooLarge);
      deps.logger.info('profile photo not fetched', {
        refused: err instanceof OutboundRefusedError,
        err: serializeError(err),
      });
      throw new Refused(E.photoUnreachable);
    }
  }
  const key = keys.profilePhoto(cmd.deviceId, cmd.requestId);
  const [[, sealed]] = (await deps.redis.multi().getBuffer(key).del(key).exec()) as [
    [unknown, Buffer | null],
  ];
  if (!sealed) throw new Refused(E.photoUnreachable);
  return deps.sealer.open(sealed, storageContext(key, 'photo'));
}
