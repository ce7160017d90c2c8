import {
  DisconnectReason,
  generateWAMessageFromContent,
  jidDecode,
  prepareWAMessageMedia,
  proto,
  type AnyMediaMessageContent,
  type AnyMessageContent,
  type WAMessage,
} from '@whiskeysockets/baileys';
import { memberJid, type AttachmentType, type ContactIdentity, isGroupAddress } from '@mgw/contracts';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { ContactAnswer, ContactCache, Encryption } from '@mgw/store';
import type { DeviceSocket } from './device-socket.js';
import { MessageProtoStore } from './message-proto-store.js';
import { FirstContacts, isDirectChat, type DirectSend, type PrivacyToken } from './first-contact.js';
import { answerOf, answersByNumber, numberLookupQuery, type NumberAnswerEntry } from './number-lookup.js';
import { isTextMessage, textContent, type LinkPreviewInput, type RevisionInput } from './outgoing-text.js';
import {
  kindMessageContent,
  openPollVote,
  ownJids,
  type EncryptedPollVote,
  type OutgoingKind,
} from './message-kinds.js';

export interface MediaInput {
  type: AttachmentType;
  /** Identifies the bytes (blob id or URL): the upload is reused for every message with this key. */
  cacheKey: string;
  /** Loads the bytes; only called when this device has not uploaded them yet. */
  load: () => Promise<Buffer>;
  fileName?: string;
  mimeType?: string;
  caption?: string;
  /** An audio sent as a voice note (push-to-talk). */
  voice?: boolean;
}

/**
 * The message a reply quotes: one of ours by its WhatsApp id (its sent proto is loaded from the
 * proto store), or one a contact sent, as the gateway recorded it: WhatsApp's key of it, its text,
 * and for an attachment the message as it arrived (an encoded `WebMessageInfo`).
 */
export type QuoteTarget =
  | { fromMe: true; platformMessageId: string }
  | {
      fromMe: false;
      key: { remoteJid: string; id: string; participant?: string };
      text?: string;
      mediaMessage?: Buffer;
    };

export interface OutgoingMessage {
  jid: string;
  /** The WhatsApp message id decided at enqueue time: a retry re-sends the same message. */
  platformMessageId: string;
  text?: string;
  media?: MediaInput;
  /** A reaction, location, contact cards or poll instead of text/media (message-kinds.ts). */
  kind?: OutgoingKind;
  /** A message to quote: one of our earlier ones, or one a contact sent. */
  quoted?: QuoteTarget;
  /** How long the sent proto is kept for retry receipts and quoting (default: the message retention). */
  keepProtoSeconds?: number;
  /** A text's link preview, fetched by the caller (never by Baileys). */
  linkPreview?: LinkPreviewInput;
  /** An edit or delete for everyone of an earlier message of ours, instead of `text`. */
  revision?: RevisionInput;
  /** Phones or LIDs (`<digits>@lid`) the text or caption mentions. */
  mentions?: string[];
  /**
   * A status update (`jid` is `status@broadcast`): its viewers' JIDs, and a text status's style.
   * Baileys encrypts it once with the account's status sender key and hands that key to each
   * viewer's devices (the fan-out of a group message, with the list instead of the members).
   */
  status?: { audience: string[]; backgroundColor?: string; font?: number };
}

export class NotConnectedError extends Error {
  override name = 'NotConnectedError';
}

/**
 * One send attempt of a message (its one or two WhatsApp messages): `began` turns true once a
 * frame of it may have been handed to the socket — WhatsApp may have it from then on — and stays
 * true. It stays false while the attempt can only have ended before that: the socket was not open,
 * it closed before the frame was written (Baileys checks the socket right before each frame it
 * writes), the message failed to be prepared (its quote, its media upload), or WhatsApp refused
 * the frame with an error ack (it delivers nothing it refused). Anything else that fails once the
 * write began (no ack, a frame that timed out, an unknown error) counts as begun.
 */
export interface SendAttempt {
  began: boolean;
}
export class ReplyTargetMissingError extends Error {
  override name = 'ReplyTargetMissingError';
}
/** The server did not acknowledge the message in time: it may not have it, so send it again. */
export class AckTimeoutError extends Error {
  override name = 'AckTimeoutError';
}
/** The number lookup (usync) got no answer in time: whether the number is on WhatsApp is unknown. */
export class LookupFailedError extends Error {
  override name = 'LookupFailedError';
}
/** The server acknowledged the message with an error code: it will not deliver it. */
export class ServerRejectedError extends Error {
  override name = 'ServerRejectedError';
  constructor(
    readonly code: string,
    /** A one-to-one message's privacy token, and whether the device held an NCT salt (first-contact.ts). */
    readonly sentWith?: { token: PrivacyToken; salt: boolean },
  ) {
    super(`the server rejected the message (error ${code})`);
  }
}

/**
 * Ack error codes that mean WhatsApp pushes back on the account rather than on one message:
 * 463 (reach-out restriction: a time lock, the new-chat cap, or a restricted account) and 429
 * (rate-overlimit). Sending on into them worsens the restriction.
 */
export const ACK_ACCOUNT_RESTRICTED = '463';
export const ACK_RATE_LIMITED = '429';

const ACK_TIMEOUT_MS = 15_000;
/** The most a status's write may take per viewer before its ack wait starts (see send). */
const STATUS_PREP_MS_PER_VIEWER = 100;

/** `promise`'s value, or undefined when it did not settle within `ms`. */
function withinMs<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const MEDIA_CACHE_MS = 60 * 60_000;

/**
 * Sends through a device's live socket. A media upload is done once per bytes (blob or URL) per
 * device and reused for every recipient, which is what keeps a 1,000-recipient image list cheap.
 */
export class MessageSender {
  private readonly protos: MessageProtoStore;
  private readonly media = new Map<string, { at: number; message: Promise<proto.IMessage> }>();
  /** How one-to-one messages are addressed and which privacy token they carry; the NCT salt. */
  readonly firstContacts: FirstContacts;

  constructor(
    private readonly conn: DeviceSocket,
    private readonly opts: {
      redis: RedisClient;
      encryption: Encryption;
      deviceId: string;
      logger: Logger;
      messageRetentionSeconds: number;
      /** The device's answers of WhatsApp's contact lookup, shared with the number check. */
      contacts: ContactCache;
      onUpload?: (type: AttachmentType, bytes: number) => void;
      /** Phone <-> LID pairs a lookup answered (the device's map keeps them). */
      onIdentities?: (identities: ContactIdentity[]) => void;
    },
  ) {
    this.protos = new MessageProtoStore(
      opts.redis,
      opts.deviceId,
      opts.messageRetentionSeconds,
      opts.encryption,
    );
    this.firstContacts = new FirstContacts(() => conn.keyStore, { logger: opts.logger });
    conn.on('nctSalt', (change) => void this.firstContacts.onSaltSync(change));
    // A device without the account's NCT salt asks for it once its socket is open (first-contact.ts
    // askForSalt): a pooled device without one takes no share of its pool's lists until it has it.
    conn.on('open', () => {
      const sock = conn.socket;
      if (sock) void this.firstContacts.askForSalt(sock, 'open');
    });
  }

  /**
   * The recipient's JID, or null when the number is not on WhatsApp. Answered from the device's
   * contact cache when it knows the number (also from a number check), else asked of WhatsApp
   * and cached (so a failover does not ask again). `readCache: false` when the caller has just
   * read the cache (`known`) and it knew nothing: WhatsApp is asked without reading it again.
   */
  async lookup(phone: string, readCache = true): Promise<string | null> {
    const cached = readCache ? await this.known(phone) : undefined;
    const answer = cached ?? (await this.lookupMany([phone])).get(phone);
    return answer?.onWhatsApp && answer.jid ? answer.jid : null;
  }

  /**
   * Starts reading the Signal keys a one-to-one message to `jid` will need (FirstContacts.prefetch):
   * a caller that knows the recipient early has them read beside its own reads, not one after
   * another once the socket write began.
   */
  prefetchKeys(jid: string, lid?: string): void {
    this.firstContacts.prefetch(jid, lid);
  }

  /** What the device's contact cache knows of `phone` (nothing is asked of WhatsApp). */
  known(phone: string): Promise<ContactAnswer | undefined> {
    return this.opts.contacts.get(this.opts.deviceId, phone);
  }

  /**
   * Asks WhatsApp about `phones` in one contact lookup (usync with `addressing_mode="lid"`, as
   * whatsmeow 6e4c3416 / d8960d95 ask it: number-lookup.ts) and caches every answer, its LID and
   * phone JID; no cache read, no batching (the caller sizes and paces the queries). Numbers are
   * matched to the answers by the number each answer echoes (else its phone JID); one still
   * unmatched (a country's number rewriting) is asked again alone, where the one answer is its own.
   */
  async lookupMany(phones: readonly string[]): Promise<Map<string, ContactAnswer>> {
    const unique = [...new Set(phones)];
    const answers = new Map<string, ContactAnswer>();
    if (unique.length === 0) return answers;
    const sock = this.requireSocket();
    // Baileys answers undefined when the usync query timed out (a server busy or going away, as
    // during a logout); a number the answer says is "out" is not on WhatsApp. Only the latter is
    // an answer worth failing a message for and caching; the former is retried.
    const result = await sock.executeUSyncQuery(numberLookupQuery(unique));
    if (!result) throw new LookupFailedError('the WhatsApp lookup of numbers got no answer');
    const list = result.list as NumberAnswerEntry[];
    const byNumber = answersByNumber(list);
    // Asked alone, the one answer is the number's whatever its JID (no entry: not on WhatsApp).
    const alone = unique.length === 1;
    const unmatched: string[] = [];
    for (const phone of unique) {
      const entry = byNumber.get(phone) ?? (alone ? list.find((e) => e.contact) : undefined);
      if (entry || alone) answers.set(phone, answerOf(entry, phone));
      else unmatched.push(phone);
    }
    // A send's own lookup (one number): the keys the send reads next go beside the cache's write
    // and the pairs' (one round trip, not three); a number check's thousands are not sends.
    const sent = alone ? answers.get(unique[0]!) : undefined;
    if (sent?.onWhatsApp && sent.jid) this.prefetchKeys(sent.jid, sent.lid);
    await Promise.all([
      this.opts.contacts.putMany(this.opts.deviceId, answers),
      this.learnPairs(sock, answers),
    ]);
    for (const phone of unmatched) answers.set(phone, (await this.lookupMany([phone])).get(phone)!);
    return answers;
  }

  /**
   * The phone <-> LID pairs of lookup answers: to the device's map, and to Baileys' own (as
   * whatsmeow's IsOnWhatsApp stores them), which the sends that follow address by (first-contact.ts).
   */
  private async learnPairs(sock: NonNullable<DeviceSocket['socket']>, answers: Map<string, ContactAnswer>) {
    const pairs = [...answers.values()].flatMap((a) =>
      a.jid && a.lid ? [{ pn: a.jid, lid: a.lid, phone: jidDecode(a.jid)?.user }] : [],
    );
    if (!pairs.length) return;
    this.opts.onIdentities?.(pairs.map(({ phone, lid }) => ({ phone, lid })));
    // A test's fake socket has no signal repository.
    await sock.signalRepository?.lidMapping
      .storeLIDPNMappings(pairs.map(({ pn, lid }) => ({ pn, lid })))
      .catch((err: unknown) =>
        this.opts.logger.warn('phone <-> LID pairs not taught to the socket', { err: serializeError(err) }),
      );
  }

  /**
   * Resolves once WhatsApp acknowledged the message. Baileys' sendMessage resolves when the frame
   * is written, not when the server has it: a socket that died under the write would otherwise
   * lose the message while we mark it sent. `attempt` learns whether the send began (see
   * SendAttempt): an attempt of two messages passes the same one to both.
   */
  async send(msg: OutgoingMessage, attempt: SendAttempt = { began: false }): Promise<void> {
    const quoted = msg.quoted ? await this.quoted(msg.jid, msg.quoted) : undefined;
    const prepared = msg.media ? await this.prepared(msg.media) : undefined;
    const sock = this.requireSocket();
    // Where a one-to-one message goes and the token it carries, decided before anything is written.
    const direct = isDirectChat(msg.jid) ? await this.firstContacts.address(sock, msg.jid) : undefined;
    // Listen before sending: the ack may arrive before sendMessage resolves. A status's write
    // first looks up, opens sessions with and encrypts to every viewer's device (seconds for
    // thousands): its wait for the ack is ACK_TIMEOUT_MS from the write, not from the start.
    const prepMs = msg.status ? msg.status.audience.length * STATUS_PREP_MS_PER_VIEWER : 0;
    const ack = sock.waitForMessage(msg.platformMessageId, ACK_TIMEOUT_MS + prepMs);
    ack.catch(() => undefined);
    // An earlier part of the attempt (the media before its follow-up text) may have begun it.
    const beganBefore = attempt.began;
    try {
      await this.write(sock, msg, quoted, prepared, direct);
    } catch (err) {
      // Closed before the message's frame went (a query it needed first, or the frame itself):
      // nothing of it was written.
      if (isConnectionClosed(err))
        throw new NotConnectedError('the socket closed before the message was written');
      attempt.began = true;
      throw err;
    }
    attempt.began = true;
    const frame = (await (prepMs ? withinMs(ack, ACK_TIMEOUT_MS) : ack)) as
      { tag?: string; attrs?: Record<string, string> } | undefined;
    if (!frame) throw new AckTimeoutError(`no server ack for ${msg.platformMessageId}`);
    if (frame.tag === 'ack' && frame.attrs?.error) {
      attempt.began = beganBefore;
      throw new ServerRejectedError(frame.attrs.error, direct && { token: direct.token, salt: direct.salt });
    }
  }

  private async write(
    sock: NonNullable<DeviceSocket['socket']>,
    msg: OutgoingMessage,
    quoted: WAMessage | undefined,
    prepared: proto.IMessage | undefined,
    direct: DirectSend | undefined,
  ): Promise<void> {
    let sent: WAMessage | undefined;
    // A one-to-one message goes to the contact's LID with its extras (first-contact.ts).
    const to = direct?.to ?? msg.jid;
    const extras = direct ? { additionalAttributes: direct.attrs, additionalNodes: direct.nodes } : {};
    if (msg.media && prepared) {
      // A copy per recipient: the caption and quote differ, the uploaded media does not.
      const content = proto.Message.decode(proto.Message.encode(prepared).finish());
      const inner = mediaPart(content, msg.media.type);
      if (inner && msg.media.caption && 'caption' in inner)
        (inner as { caption?: string }).caption = msg.media.caption;
      if (inner && msg.mentions?.length && 'contextInfo' in inner)
        (inner as { contextInfo?: proto.IContextInfo }).contextInfo = {
          mentionedJid: msg.mentions.map(memberJid),
        };
      const full = generateWAMessageFromContent(msg.jid, content, {
        userJid: sock.user?.id ?? '',
        messageId: msg.platformMessageId,
        quoted,
      });
      await sock.relayMessage(to, full.message!, {
        messageId: full.key.id!,
        ...extras,
        ...(msg.status ? { statusJidList: msg.status.audience } : {}),
      });
      sent = full;
    } else if (msg.kind) {
      const content = kindMessageContent(msg.jid, msg.kind);
      sent = await sock.sendMessage(to, content, { messageId: msg.platformMessageId, quoted, ...extras });
    } else {
      const content = textContent(msg.jid, msg.text, msg.linkPreview, msg.revision);
      const mentions = !msg.revision && msg.mentions?.length ? { mentions: msg.mentions.map(memberJid) } : {};
      sent = await sock.sendMessage(to, { ...content, ...mentions } as AnyMessageContent, {
        messageId: msg.platformMessageId,
        quoted,
        ...extras,
        ...(msg.status ? statusOptions(msg.status) : {}),
      });
    }
    if (sent?.message) await this.protos.save(msg.platformMessageId, sent.message, msg.keepProtoSeconds);
  }

  /** Whether our sent message `platformMessageId` is a text (undefined: its proto is gone). */
  async sentText(platformMessageId: string): Promise<boolean | undefined> {
    const message = await this.protos.load(platformMessageId);
    return message ? isTextMessage(message) : undefined;
  }

  /** Shows "typing…" at the contact (WhatsApp's `composing` chat state); `paused` ends it. */
  async presence(jid: string, state: 'composing' | 'paused'): Promise<void> {
    await this.requireSocket().sendPresenceUpdate(state, jid);
  }

  /** The options a contact's vote on our poll selects (their hashes), or undefined when it does not open. */
  openPollVote(vote: EncryptedPollVote, secret: Buffer): string[] | undefined {
    const user = this.conn.socket?.user as { id?: string; lid?: string } | undefined;
    return openPollVote(vote, secret, ownJids(user));
  }

  private requireSocket() {
    const sock = this.conn.socket;
    if (!sock || !this.conn.isOpen) throw new NotConnectedError('the device socket is not open');
    return sock;
  }

  /**
   * The quoted message as Baileys needs it. Ours: its stored proto (replies go to the chat they
   * quote from). A contact's: its key, with its writer as the quote's author; a one-to-one
   * message is named in the chat the reply goes to (a contact known by phone and LID is one chat),
   * a group's keeps its group, which WhatsApp shows as a private reply when the reply goes
   * elsewhere. Its content: the attachment as it arrived, else its text (empty for a kind the
   * gateway keeps no proto of: the contact's phone shows its own copy by the id).
   */
  private async quoted(jid: string, target: QuoteTarget): Promise<WAMessage> {
    if (target.fromMe) {
      const message = await this.protos.load(target.platformMessageId);
      if (!message) throw new ReplyTargetMissingError(`no stored message ${target.platformMessageId}`);
      return { key: { remoteJid: jid, fromMe: true, id: target.platformMessageId }, message };
    }
    const { key } = target;
    const inGroup = isGroupAddress(key.remoteJid);
    const media = target.mediaMessage ? proto.WebMessageInfo.decode(target.mediaMessage).message : undefined;
    return {
      key: {
        remoteJid: inGroup ? key.remoteJid : jid,
        fromMe: false,
        id: key.id,
        participant: inGroup ? key.participant : key.remoteJid,
      },
      message: media ?? { conversation: target.text ?? '' },
    };
  }

  private prepared(media: MediaInput): Promise<proto.IMessage> {
    const now = Date.now();
    for (const [k, v] of this.media) if (now - v.at > MEDIA_CACHE_MS) this.media.delete(k);
    const key = `${media.type}|${media.mimeType ?? ''}|${media.fileName ?? ''}|${media.voice ? 'ptt|' : ''}${media.cacheKey}`;
    const hit = this.media.get(key);
    if (hit) return hit.message;
    const message = (async () => {
      const bytes = await media.load();
      const sock = this.requireSocket();
      const content = {
        [media.type]: bytes,
        ...(media.mimeType ? { mimetype: media.mimeType } : {}),
        ...(media.fileName ? { fileName: media.fileName } : {}),
        ...(media.voice ? { ptt: true } : {}),
      } as unknown as AnyMediaMessageContent;
      const prepared = await prepareWAMessageMedia(content, {
        upload: sock.waUploadToServer,
        mediaUploadTimeoutMs: 60_000,
      });
      this.opts.onUpload?.(media.type, bytes.length);
      return prepared;
    })();
    this.media.set(key, { at: now, message });
    message.catch(() => this.media.delete(key));
    return message;
  }
}

/**
 * Baileys' "Connection Closed": thrown before a frame is written when the socket is not open (and
 * by a query's wait when the socket closes under it), never after its frame was handed over.
 */
function isConnectionClosed(err: unknown): boolean {
  return (
    err instanceof Error &&
    err.message === 'Connection Closed' &&
    (err as { output?: { statusCode?: number } }).output?.statusCode === DisconnectReason.connectionClosed
  );
}

/** Baileys' options of a status update: its viewers, and a text status's background and font. */
function statusOptions(status: NonNullable<OutgoingMessage['status']>) {
  return {
    statusJidList: status.audience,
    ...(status.backgroundColor ? { backgroundColor: status.backgroundColor } : {}),
    ...(status.font !== undefined ? { font: status.font } : {}),
  };
}

/** Attachment types whose WhatsApp message has a caption (audio and stickers have none). */
export function supportsCaption(type: AttachmentType): boolean {
  return type === 'image' || type === 'video' || type === 'document';
}

function mediaPart(content: proto.IMessage, type: AttachmentType): object | null | undefined {
  switch (type) {
    case 'image':
      return content.imageMessage;
    case 'video':
      return content.videoMessage;
    case 'audio':
      return content.audioMessage;
    case 'document':
      return content.documentMessage;
    case 'sticker':
      return content.stickerMessage;
  }
}
