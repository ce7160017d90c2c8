import { promisify } from 'node:util';
import { isGroupAddress, type ContactIdentity, type GroupChat } from '@mgw/contracts';
import { inflate } from 'node:zlib';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { decryptMedia, mediaUrlOf, MediaDecryptError } from './inbound-media.js';
import { identityOfJids, parseInbound, type InboundMessage } from './inbound-message.js';
import { historySyncNctSalt } from './nct-salt.js';

const inflateAsync = promisify(inflate);

/**
 * WhatsApp's history sync, read by the gateway itself rather than by Baileys (whose
 * `shouldSyncHistoryMessage` stays off, so it never holds events back waiting for history): the
 * account's phone sends a linked device a HISTORY_SYNC_NOTIFICATION (a peer message, `fromMe`)
 * naming an encrypted, deflated `proto.HistorySync` on the media CDN (or carrying it deflated
 * inline, `initialHistBootstrapInlinePayload`, read first). The gateway fetches it
 * through its guarded outbound client, within a byte bound before and after inflating, and takes
 * at most a given number of messages from it: texts and attachments of one-to-one and group
 * chats, in both directions — an attachment as a live inbound one is kept, by its description and
 * its media reference (for a download on demand), never its bytes.
 */

/** One history sync notification as it arrived (what `readHistory` fetches). */
export interface HistoryNotice {
  /** The notification message's id (for logs). */
  id: string;
  notification: proto.Message.IHistorySyncNotification;
}

/**
 * A message of the account's history, as the gateway records it (an attachment's `mediaMessage`:
 * the message itself, encoded, from which GET /messages/:id/media downloads it later).
 */
export type HistoryMessage = InboundMessage & {
  /** `outbound`: the account wrote it (from any of its devices); `contact` is then the chat's. */
  direction: 'inbound' | 'outbound';
};

export interface HistoryChunk {
  syncType: string;
  chunkOrder: number;
  progress: number;
  conversations: number;
  /** The chunk's messages, oldest first, at most `maxMessages`. */
  messages: HistoryMessage[];
  /** Messages of the chunk left out by `maxMessages` (the newest are kept). */
  skipped: number;
  /** Phone <-> LID pairs the chats name. */
  identities: ContactIdentity[];
  /** The account's NCT salt, when the chunk carries it (field 19: nct-salt.ts). */
  nctSalt?: Buffer;
}

export interface HistoryLimits {
  /** The most encrypted bytes fetched, and the most bytes inflated. */
  maxBytes: number;
  /** The most messages taken from this chunk. */
  maxMessages: number;
}

export class HistoryTooLargeError extends Error {
  override name = 'HistoryTooLargeError';
}

const WITH_CHATS = new Set([
  proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
  proto.HistorySync.HistorySyncType.RECENT,
  proto.HistorySync.HistorySyncType.FULL,
  proto.HistorySync.HistorySyncType.ON_DEMAND,
]);

/** The history sync notifications among upserted messages (the account's own peer messages only). */
export function historyNoticesOf(messages: WAMessage[]): HistoryNotice[] {
  const out: HistoryNotice[] = [];
  for (const m of messages) {
    const protocol = m.message?.protocolMessage;
    if (!m.key.fromMe || !m.key.id) continue;
    if (protocol?.type !== proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION) continue;
    if (protocol.historySyncNotification)
      out.push({ id: m.key.id, notification: protocol.historySyncNotification });
  }
  return out;
}

/**
 * Fetches (`fetchBytes`: the guarded outbound client; `mediaOrigin`: the CDN, or a sandbox's media
 * host), decrypts, inflates and reads one history chunk. Throws HistoryTooLargeError past
 * `maxBytes` (announced, fetched or inflated), MediaDecryptError for a file that fails its checks.
 */
export async function readHistory(
  notice: HistoryNotice,
  fetchBytes: (url: string) => Promise<Buffer>,
  limits: HistoryLimits,
  mediaOrigin?: string,
): Promise<HistoryChunk> {
  const plain = await historyBytes(notice, fetchBytes, limits, mediaOrigin);
  const chunk = historyChunkOf(proto.HistorySync.decode(plain), limits.maxMessages);
  const nctSalt = historySyncNctSalt(plain);
  return nctSalt ? { ...chunk, nctSalt } : chunk;
}

/**
 * Only the NCT salt of a chunk (fetched and inflated as `readHistory` does, nothing else decoded):
 * for a device that keeps no history but has no salt yet. Undefined when the chunk has none.
 */
export async function readHistorySalt(
  notice: HistoryNotice,
  fetchBytes: (url: string) => Promise<Buffer>,
  limits: Pick<HistoryLimits, 'maxBytes'>,
  mediaOrigin?: string,
): Promise<Buffer | undefined> {
  return historySyncNctSalt(await historyBytes(notice, fetchBytes, limits, mediaOrigin));
}

/**
 * The chunk's `HistorySync`, encoded, within `maxBytes`: the notification's inline payload when it
 * has one (`initialHistBootstrapInlinePayload`: deflated, not encrypted, no media key), else the
 * file it names, fetched, checked and decrypted — inline first, as whatsmeow (`DownloadHistorySync`,
 * message.go) and Baileys (`downloadAndProcessHistorySyncNotification`, Utils/history.ts) read it.
 * Both forms are zlib-deflated alike.
 */
async function historyBytes(
  notice: HistoryNotice,
  fetchBytes: (url: string) => Promise<Buffer>,
  limits: Pick<HistoryLimits, 'maxBytes'>,
  mediaOrigin?: string,
): Promise<Buffer> {
  const n = notice.notification;
  const inline = n.initialHistBootstrapInlinePayload;
  if (inline?.length) {
    if (inline.length > limits.maxBytes)
      throw new HistoryTooLargeError(
        `the inline history is ${inline.length} bytes (at most ${limits.maxBytes})`,
      );
    return inflateWithin(Buffer.from(inline), limits.maxBytes);
  }
  const announced = Number(n.fileLength ?? 0);
  if (announced > limits.maxBytes)
    throw new HistoryTooLargeError(`the history file is ${announced} bytes (at most ${limits.maxBytes})`);
  if (!n.mediaKey?.length)
    throw new MediaDecryptError('the history notification carries neither an inline payload nor a media key');
  const url = mediaOrigin && n.directPath?.startsWith('/') ? `${mediaOrigin}${n.directPath}` : mediaUrlOf(n);
  if (!url) throw new MediaDecryptError('the history notification carries no location');
  const encrypted = await fetchBytes(url);
  if (encrypted.length > limits.maxBytes + 64)
    throw new HistoryTooLargeError(
      `the history file is ${encrypted.length} bytes (at most ${limits.maxBytes})`,
    );
  const deflated = await decryptMedia(encrypted, n.mediaKey, 'md-msg-hist', n.fileSha256);
  return inflateWithin(deflated, limits.maxBytes);
}

async function inflateWithin(deflated: Buffer, maxBytes: number): Promise<Buffer> {
  try {
    return await inflateAsync(deflated, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new HistoryTooLargeError(`the history inflates past ${maxBytes} bytes`);
    throw new MediaDecryptError(`the history does not inflate: ${(err as Error).message}`);
  }
}

/** The messages and identities of a decoded chunk: the newest `maxMessages`, oldest first. */
export function historyChunkOf(sync: proto.IHistorySync, maxMessages: number): HistoryChunk {
  const type = sync.syncType ?? proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP;
  const conversations = WITH_CHATS.has(type) ? (sync.conversations ?? []) : [];
  const messages: HistoryMessage[] = [];
  const identities: ContactIdentity[] = [];
  for (const c of conversations) {
    const pair = identityOfJids(c.id, c.pnJid, c.lidJid);
    if (pair.phone && pair.lid) identities.push(pair);
    for (const item of c.messages ?? []) {
      const m = item.message ? historyMessageOf(item.message as WAMessage, c.name ?? undefined) : undefined;
      if (m) messages.push(m);
    }
  }
  messages.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime());
  const kept = messages.slice(Math.max(0, messages.length - maxMessages));
  return {
    syncType: proto.HistorySync.HistorySyncType[type] ?? String(type),
    chunkOrder: sync.chunkOrder ?? 0,
    progress: sync.progress ?? 0,
    conversations: conversations.length,
    messages: kept,
    skipped: messages.length - kept.length,
    identities,
  };
}

/**
 * One message of the history, read as a live one is (`parseInbound`); the account's own
 * (`fromMe`) with the chat as its contact (in a group: none).
 */
function historyMessageOf(msg: WAMessage, chatName?: string): HistoryMessage | undefined {
  const jid = msg.key.remoteJid ?? '';
  const group = isGroupAddress(jid);
  const parsed = parseInbound(msg, !!msg.key.fromMe);
  // Reactions and poll votes act on other messages: not messages of a chat's history.
  if (!parsed || parsed.reaction || parsed.pollVote) return undefined;
  const chat: GroupChat | undefined = group
    ? { type: 'group', id: jid, ...(chatName ? { subject: chatName } : {}) }
    : undefined;
  return {
    ...parsed,
    ...(chat ? { chat } : {}),
    direction: msg.key.fromMe ? 'outbound' : 'inbound',
  };
}
