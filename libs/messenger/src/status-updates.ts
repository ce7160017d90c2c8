/**
 * Status updates as Baileys reports them: viewers opening ours (read receipts on
 * `status@broadcast`, which Baileys emits as `message-receipt.update`, one per viewer, or folds into
 * the upsert of a status it still buffers), and the
 * statuses contacts post (messages from `status@broadcast`, their author as `participant`).
 */
import {
  extractMessageContent,
  type MessageUserReceiptUpdate,
  type WAMessage,
} from '@whiskeysockets/baileys';
import { isStatusAddress, type ContactIdentity } from '@mgw/contracts';
import { identityOfJids } from './inbound-message.js';
import { kindReceivedAt } from './inbound-kinds.js';

/** A viewer opened one of our statuses. */
export interface StatusView {
  platformMessageId: string;
  /** The viewer's JID as WhatsApp named it (`<phone>@s.whatsapp.net` or `<digits>@lid`). */
  viewerJid: string;
  viewer: ContactIdentity;
  at: Date;
}

/** A contact's status update. */
export interface InboundStatus {
  platformMessageId: string;
  contact: ContactIdentity;
  text?: string;
  attachment?: { type: 'image' | 'video' | 'audio'; mimeType: string; size: number };
  /** A text status's background, `#AARRGGBB`. */
  backgroundColor?: string;
  postedAt: Date;
}

/** The views among receipt updates: read receipts of our own messages on `status@broadcast`. */
export function statusViewsOf(updates: readonly MessageUserReceiptUpdate[]): StatusView[] {
  const views: StatusView[] = [];
  for (const { key, receipt } of updates) {
    if (!key.fromMe || !key.id || !isStatusAddress(key.remoteJid)) continue;
    const viewerJid = receipt.userJid;
    const read = receipt.readTimestamp ?? receipt.playedTimestamp;
    if (!viewerJid || read == null) continue;
    const viewer = identityOfJids(viewerJid);
    if (!viewer.phone && !viewer.lid) continue;
    const seconds = typeof read === 'number' ? read : Number(read);
    views.push({
      platformMessageId: key.id,
      viewerJid,
      viewer,
      at: seconds > 0 ? new Date(seconds * 1000) : new Date(),
    });
  }
  return views;
}

/**
 * The views folded into upserts of our own statuses. Baileys buffers its events: a view that
 * arrives while the upsert of the status we just posted is still buffered is merged into that
 * message's `userReceipt`, and no `message-receipt.update` follows for it (a viewer who opens the
 * status within a moment of its posting).
 */
export function statusViewsInUpserts(messages: readonly WAMessage[]): StatusView[] {
  return statusViewsOf(
    messages.flatMap((m) => (m.userReceipt ?? []).map((receipt) => ({ key: m.key, receipt }))),
  );
}

/** What upserts tell of statuses: views of ours folded into them, and contacts' statuses. */
export function statusUpdatesOf(messages: readonly WAMessage[]): {
  views: StatusView[];
  statuses: InboundStatus[];
} {
  return {
    views: statusViewsInUpserts(messages),
    statuses: messages.map(parseInboundStatus).filter((m): m is InboundStatus => m !== undefined),
  };
}

const MEDIA: ['imageMessage' | 'videoMessage' | 'audioMessage', 'image' | 'video' | 'audio'][] = [
  ['imageMessage', 'image'],
  ['videoMessage', 'video'],
  ['audioMessage', 'audio'],
];

/** A contact's status (text or one picture, video or voice note); anything else is skipped. */
export function parseInboundStatus(msg: WAMessage): InboundStatus | undefined {
  const key = msg.key;
  if (key.fromMe || !key.id || !msg.message || !isStatusAddress(key.remoteJid)) return undefined;
  const contact = identityOfJids(key.participant, key.participantAlt);
  if (!contact.phone && !contact.lid) return undefined;
  const content = extractMessageContent(msg.message);
  if (!content) return undefined;
  const base = { platformMessageId: key.id, contact, postedAt: kindReceivedAt(msg) };
  const text = content.conversation ?? content.extendedTextMessage?.text ?? undefined;
  if (text !== undefined) {
    const argb = content.extendedTextMessage?.backgroundArgb;
    return {
      ...base,
      text,
      ...(typeof argb === 'number'
        ? { backgroundColor: `#${(argb >>> 0).toString(16).padStart(8, '0').toUpperCase()}` }
        : {}),
    };
  }
  for (const [field, type] of MEDIA) {
    const media = content[field];
    if (!media) continue;
    const size = media.fileLength;
    const caption = 'caption' in media ? (media.caption ?? undefined) : undefined;
    return {
      ...base,
      ...(caption ? { text: caption } : {}),
      attachment: {
        type,
        mimeType: media.mimetype ?? 'application/octet-stream',
        size: typeof size === 'number' ? size : (size?.toNumber() ?? 0),
      },
    };
  }
  return undefined;
}
