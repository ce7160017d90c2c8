/**
 * What a device socket (device-socket.ts) reports: its events and their payloads, and the readers
 * that turn Baileys' data into two of them (receipts, the account's name).
 */
import { proto } from '@whiskeysockets/baileys';
import type { ContactIdentity } from '@mgw/contracts';
import type { CloseInfo } from './disconnect-reason.js';
import type { CallUpdate } from './calls.js';
import type { GroupChangeNotice } from './group-events.js';
import type { LabelNotice } from './label-events.js';
import type { HistoryNotice } from './history-sync.js';
import type { NctSaltChange } from './nct-salt.js';
import type { InboundMessage } from './inbound-message.js';
import type { InboundRevision } from './inbound-revision.js';
import type { SecretEncryptedEdit } from './secret-edit.js';
import type { ProxyFailure } from './proxy.js';
import type { InboundStatus, StatusView } from './status-updates.js';
import type { ChannelPost } from './channel-posts.js';

export interface AccountInfo {
  /** The linked account's phone number (digits). */
  phone: string;
  name?: string;
  profilePic?: string;
}

export interface ReceiptUpdate {
  platformMessageId: string;
  status: 'delivered' | 'read';
  at: Date;
}

export interface DeviceSocketEvents {
  /** The socket logged in: sends may go now (`open` follows once the account is described). */
  loggedIn: [];
  /** The socket logged in and the account was described (its picture looked up: up to 10 s). */
  open: [AccountInfo];
  /** Every close; `final` when this connection will not reconnect by itself. */
  close: [CloseInfo & { final: boolean }];
  reconnecting: [{ attempt: number; delayMs: number }];
  receipts: [ReceiptUpdate[]];
  /** A connection through the device's proxy failed (the close that follows says `proxy_<kind>`). */
  proxyFailure: [ProxyFailure & { where: string }];
  /** Contacts wrote to the account (one-to-one text and media; see parseInbound). */
  inbound: [InboundMessage[]];
  /** Contacts edited or deleted messages they sent (see parseRevision). */
  revisions: [InboundRevision[]];
  /** Contacts' edits sent secret-encrypted, to open with their original's secret (secret-edit.ts). */
  secretEdits: [SecretEncryptedEdit[]];
  /** The account's push name arrived or changed after open (app-state sync). */
  name: [string];
  /** An auth-state write was refused: another process holds the device now. */
  fenced: [];
  /** Hand-over began (`drain`): nobody should wait for a socket that will not come back. */
  draining: [];
  /** WhatsApp set, changed or lifted the account's reach-out time lock. */
  reachout: [ReachoutLock];
  /**
   * These contacts wrote to the account (so it has a chat with them): their phone numbers, and
   * `<digits>@lid` for a chat whose number the message did not tell.
   */
  wroteToUs: [string[]];
  /** Phone <-> LID pairs the client learnt, and LIDs of chats met without a number. */
  identities: [ContactIdentity[]];
  /** Viewers opened our status updates (read receipts on `status@broadcast`). */
  statusViews: [StatusView[]];
  /** Contacts posted status updates (status-updates.ts). */
  statuses: [InboundStatus[]];
  /** Posts of channels the account follows (channel-posts.ts). */
  channelPosts: [ChannelPost[]];
  /** Incoming calls: offered, answered or rejected elsewhere, timed out, ended (calls.ts). */
  calls: [CallUpdate[]];
  /** A group's subject, description, settings or members changed (group-events.ts). */
  groupChanges: [GroupChangeNotice[]];
  /** A business label was edited, or a chat labelled or unlabelled (label-events.ts). */
  label: [LabelNotice];
  /** The account's phone sent history (history-sync.ts: read with `readHistory`). */
  history: [HistoryNotice[]];
  /** The app-state sync set or removed the account's NCT salt (nct-salt.ts). */
  nctSalt: [NonNullable<NctSaltChange>];
}

/** The account's reach-out time lock: while active, WhatsApp refuses new chats (ack 463). */
export interface ReachoutLock {
  active: boolean;
  /** When the lock ends (absent when WhatsApp did not say). */
  until?: Date;
  enforcementType?: string;
}

/** The new-chat cap as WhatsApp reports it. */
export interface NewChatCap {
  capped: boolean;
  /** When the current cap cycle ends. */
  cycleEndsAt?: Date;
}

/**
 * Delivery and read receipts of our own messages among Baileys' message statuses (from
 * `messages.update`, or folded into a `messages.upsert`); a sent message's own status (pending,
 * server ack) is not a receipt.
 */
export function receiptsOf(
  items: readonly { key: proto.IMessageKey; status?: proto.WebMessageInfo.Status | null }[],
): ReceiptUpdate[] {
  const receipts: ReceiptUpdate[] = [];
  for (const { key, status } of items) {
    if (!key.fromMe || !key.id || status == null) continue;
    const receipt =
      status >= proto.WebMessageInfo.Status.READ
        ? 'read'
        : status === proto.WebMessageInfo.Status.DELIVERY_ACK
          ? 'delivered'
          : undefined;
    if (receipt) receipts.push({ platformMessageId: key.id, status: receipt, at: new Date() });
  }
  return receipts;
}

/** `requestPairingCode` sets the name to "~" as a placeholder: that is not a name. */
export function accountName(name: string | null | undefined): string | undefined {
  return name && name !== '~' ? name : undefined;
}
