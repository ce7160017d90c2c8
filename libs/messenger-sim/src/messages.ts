import {
  getBinaryNodeChild,
  jidDecode,
  proto,
  unpadRandomMax16,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import { MAX_INBOX, noteUndecryptable, type InboxMessage, type SimUser } from './directory.js';
import { handleGroupMessage, mentionsOf, type GroupMessagesContext } from './group-messages.js';
import { handleStatusMessage, STATUS_JID, type StatusBroadcastContext } from './status-broadcast.js';
import { describeMessage } from './message-content.js';
import { applyRevision } from './revisions.js';
import { rememberPollSecret } from './message-kinds.js';
import { sha256Hex } from './media-host.js';
import { signalAddress } from './phone-signal.js';
import { handleNewsletterMessage, type NewsletterPostsContext } from './newsletter-posts.js';
import { scheduleReceipts, type ReceiptsContext } from './receipts.js';
import { askAgain, copyVerdict, type RetryReceiptsContext } from './retry-receipts.js';
import type { Reachout } from './reachout.js';
import { bytesOf, childrenNamed, node, unixSeconds } from './stanza.js';
import { chatJidOf, lidAddressed } from './lid-chats.js';
import { peerRecipientMismatch, recordDirectMessage, STANZA_FIELD_INVALID } from './first-contacts.js';

/** What the messages of linked devices need of the simulator, with what the handlers they go on to need. */
export interface MessagesContext
  extends
    GroupMessagesContext,
    StatusBroadcastContext,
    NewsletterPostsContext,
    ReceiptsContext,
    RetryReceiptsContext {
  readonly reachout: Reachout;
}

const ERROR_ACK_DELAY_MS = 300;

/** Keeps each inbox in arrival order even when media decryption of an earlier message is slower. */
const inboxTails = new WeakMap<SimUser, Promise<void>>();

/**
 * A message stanza from a linked device: ack it (or fail it when a fault is armed), then let
 * every addressed simulated phone decrypt its copy. Decrypt calls are issued synchronously in
 * arrival order because the Signal ratchet must see them in the order the client encrypted.
 */
export function handleClientMessage(sim: MessagesContext, conn: ClientConnection, stanza: BinaryNode): void {
  const account = conn.account;
  const device = conn.device;
  const id = stanza.attrs.id ?? '';
  const to = stanza.attrs.to ?? '';
  if (!account || !device) return;
  const target = jidDecode(to);
  if (target?.server === 'g.us') return handleGroupMessage(sim, conn, stanza);
  if (to === STATUS_JID) return handleStatusMessage(sim, conn, stanza);
  if (target?.server === 'newsletter') return handleNewsletterMessage(sim, conn, stanza);
  const recipient = target ? sim.directory.resolve(target.user, target.server) : undefined;
  const ack = node('ack', { class: 'message', id, from: to, t: unixSeconds() });
  const tokens = {
    tctoken: bytesOf(getBinaryNodeChild(stanza, 'tctoken')),
    cstoken: bytesOf(getBinaryNodeChild(stanza, 'cstoken')),
  };
  const fault = sim.faults.takeAckError(account.phone, recipient?.phone ?? target?.user ?? '');
  const mismatch = fault === undefined && peerRecipientMismatch(recipient, stanza);
  const admission =
    fault === undefined && !mismatch ? sim.reachout.admit(account, recipient, tokens) : undefined;
  const error = fault ?? (mismatch ? STANZA_FIELD_INVALID : admission?.error);
  recordDirectMessage(account, recipient, stanza, tokens, admission, error);
  if (error !== undefined) {
    // like receipts, an error that lands while Baileys still buffers the own-message upsert is
    // folded into it and never surfaces as messages.update
    ack.attrs.error = String(error);
    setTimeout(() => conn.send(ack), ERROR_ACK_DELAY_MS).unref();
    return;
  }
  conn.send(ack);

  const sender = signalAddress(account.lid, device.id);
  const participants = childrenNamed(getBinaryNodeChild(stanza, 'participants'), 'to');
  for (const participant of participants) {
    const jid = jidDecode(participant.attrs.jid ?? '');
    const enc = getBinaryNodeChild(participant, 'enc');
    const ciphertext = bytesOf(enc);
    if (!jid || !enc || !ciphertext) continue;
    const user = sim.directory.resolve(jid.user, jid.server);
    if (!user || (jid.device ?? 0) !== 0) continue;
    // an undecryptable fault of the contact decides first (a re-install replaces its keys)
    const verdict = user === account ? { fails: false } : copyVerdict(sim, user, id, stanza.attrs.t);
    const plaintext = user.signal.decrypt(sender, enc.attrs.type ?? 'msg', ciphertext);
    if (user === account) {
      // the copy for the account's own phone only needs to keep that ratchet in step
      plaintext.catch((err: unknown) => sim.logger.debug({ err, id }, 'own phone could not decrypt'));
      continue;
    }
    const previous = inboxTails.get(user) ?? Promise.resolve();
    // a LID-addressed chat's receipts come from the contact's LID, whatever the client addressed
    const chatJid = lidAddressed(user) ? chatJidOf(user) : to;
    if (verdict.fails) {
      // the phone could not read this copy (its ratchet still moved if it could): it asks again
      const failed = plaintext.then(
        () => new Error('undecryptable fault: copy not read'),
        (err: unknown) => err,
      );
      const asked = previous
        .then(() => failed)
        .then((err) => askAgain(sim, user, device, chatJid, id, account.phone, err));
      inboxTails.set(user, asked);
      continue;
    }
    const done = previous
      .then(() => recordArrival(sim, user, account, plaintext, id))
      .then(() => scheduleReceipts(sim, user, device, chatJid, id))
      .catch((err: unknown) => {
        sim.logger.warn({ err, id, to: user.phone }, 'recipient could not read message');
        noteUndecryptable(user, id, account.phone, err);
      });
    inboxTails.set(user, done);
  }
}

async function recordArrival(
  sim: MessagesContext,
  user: SimUser,
  from: SimUser,
  plaintext: Promise<Buffer>,
  id: string,
): Promise<void> {
  const message = proto.Message.decode(unpadRandomMax16(await plaintext));
  const { fields, media } = describeMessage(message);
  if (fields.type === 'poll') rememberPollSecret(user, id, message);
  const entry: InboxMessage = {
    id,
    from: from.phone,
    ...fields,
    ...mentionsOf(message),
    receivedAt: new Date().toISOString(),
  };
  if (media) {
    const bytes = await sim.media.decrypt(media, media.mediaKey, media.mediaType);
    entry.fileSha256 = sha256Hex(bytes);
    entry.fileLength = bytes.length;
  }
  // Like a real phone, a contact shows a message once per sender and id: a re-sent copy (a retry
  // after a crash between send and bookkeeping) is counted on the first entry, not shown twice.
  const first = user.inbox.find((m) => m.id === id && m.from === entry.from);
  if (first) {
    first.duplicates = (first.duplicates ?? 0) + 1;
    sim.logger.debug({ id, to: user.phone }, 'duplicate copy of a message arrived');
    return;
  }
  applyRevision(user, entry);
  // a long-running sandbox keeps the most recent messages only
  if (user.inbox.push(entry) > MAX_INBOX) user.inbox.shift();
  sim.logger.debug({ id, to: user.phone, type: entry.type }, 'message arrived');
}
