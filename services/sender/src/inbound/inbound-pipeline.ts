import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { ContactIdentity, Metrics } from '@mgw/contracts';
import type { DeviceSocket } from '@mgw/messenger';
import {
  rememberChats,
  type ContactIdentities,
  type InboundStore,
  type MessageRevisions,
  type MessageStore,
} from '@mgw/store';
import type { DeviceRestriction } from '../device/device-restriction.js';
import type { IncomingCalls } from '../calls/incoming-calls.js';
import { autoRead, type AutoReadDeps } from './auto-read.js';
import { recordInbound } from './inbound.js';
import type { InboundKinds } from './inbound-kinds.js';
import { recordInboundRevisions } from './inbound-revisions.js';
import { openSecretEdits } from './secret-edits.js';
import { checkKeywords, type OptOutKeywords } from './opt-outs.js';
import { ReceiptBatcher } from './receipts.js';
import type { InboundMediaKeeper } from './inbound-media-keeper.js';

export interface InboundDeps {
  deviceId: string;
  redis: RedisClient;
  metrics: Metrics;
  logger: Logger;
  messages: MessageStore;
  inbound: InboundStore;
  revisions: MessageRevisions;
  restriction: Pick<DeviceRestriction, 'onReachout'>;
  identities: ContactIdentities;
  keepIdentities: (learnt: ContactIdentity[]) => void;
  inboundKinds: Pick<InboundKinds, 'apply'>;
  optOutKeywords: OptOutKeywords;
  /** Keeps the attachments the device chose in the media store before they are recorded. */
  mediaKeeper: Pick<InboundMediaKeeper, 'keep'>;
  calls: Pick<IncomingCalls, 'onUpdates'>;
  autoRead: AutoReadDeps;
}

/**
 * What arrives from a device's socket besides its connection's ups and downs (device-runtime.ts):
 * WhatsApp's reach-out lock, who wrote to us, the identities learnt, receipts, contacts' edits and
 * deletes, and their messages — reactions and poll votes first, then the rest recorded, then the
 * opt-out keywords of those recorded now. Their attachments are kept in the media store first when
 * the device asks for it (inbound-media-keeper.ts), else downloaded on the API's request
 * (commands/media-download.ts).
 * WhatsApp's reach-out lock, who wrote to us, the identities learnt, receipts, calls, contacts'
 * edits and deletes, and their messages — reactions and poll votes first, then the rest recorded,
 * then the opt-out keywords of those recorded now and, when the device says so, their read receipts. (Their attachments are downloaded on the API's request:
 * commands/media-download.ts.)
 */
export function wireInbound(conn: DeviceSocket, deps: InboundDeps): void {
  const { deviceId, metrics, logger: log } = deps;
  wireAccountSafety(conn, deps);
  const receipts = new ReceiptBatcher(deps.messages, deviceId, metrics, (err) =>
    log.warn('receipts not applied', { err: serializeError(err) }),
  );
  conn.on('receipts', (batch) => receipts.add(batch));
  conn.on('calls', (updates) => void deps.calls.onUpdates(updates));
  conn.on('revisions', (received) => {
    void recordInboundRevisions(deps.revisions, deviceId, received, metrics, log);
  });
  conn.on('secretEdits', (received) => {
    void openSecretEdits(deps.revisions, deviceId, received, metrics, log).then((opened) =>
      recordInboundRevisions(deps.revisions, deviceId, opened, metrics, log),
    );
  });
  conn.on('inbound', (received) => {
    void deps.inboundKinds
      .apply(received)
      .then((rest) => deps.mediaKeeper.keep(rest))
      .then((rest) => recordInbound(deps.inbound, deviceId, rest, metrics, deps.identities))
      .then((recorded) =>
        Promise.all([checkKeywords(deps.optOutKeywords, recorded, log), autoRead(deps.autoRead, recorded)]),
      )
      .catch((err: unknown) => log.warn('inbound messages not recorded', { err: serializeError(err) }));
  });
}

/** WhatsApp's reach-out lock pauses and resumes sending; who wrote to us is no first contact. */
function wireAccountSafety(conn: DeviceSocket, deps: InboundDeps): void {
  const { deviceId, logger: log } = deps;
  conn.on('reachout', (lock) => {
    void deps.restriction
      .onReachout(lock)
      .catch((err: unknown) => log.warn('reach-out lock not applied', { err: serializeError(err) }));
  });
  conn.on('wroteToUs', (addresses) => {
    void chatsOf(deps.identities, deviceId, addresses)
      .then((chats) => rememberChats(deps.redis, deviceId, chats))
      .catch(() => undefined);
  });
  conn.on('identities', (learnt) => deps.keepIdentities(learnt));
}

/**
 * Who wrote, as the first-contact cap names chats: each phone and LID, and the phone the map
 * knows for a LID chat (so a send to either counts the chat as one that wrote).
 */
async function chatsOf(
  identities: Pick<ContactIdentities, 'resolveMany'>,
  deviceId: string,
  addresses: string[],
): Promise<string[]> {
  const chats = new Set(addresses);
  for (const c of await identities.resolveMany(deviceId, addresses)) {
    if (c.phone) chats.add(c.phone);
    if (c.lid) chats.add(c.lid);
  }
  return [...chats];
}
