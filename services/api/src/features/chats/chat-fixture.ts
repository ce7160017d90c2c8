import { createMetrics, type DeviceCommandReply, type MessageRecord, type ReadKey } from '@mgw/contracts';
import type { ChatRow } from '@mgw/store';
import { MemoryHolder } from '../test-support.js';
import type { ReadDeps } from './mark-read.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): marking read without an API, for the
 * fast tests of readChat, readMessage and markRead (`<use-case>.test.ts` beside each) — the chats
 * in memory, and an in-memory holder answering mark-read as read-command.ts does.
 */

/**
 * A device's chats as marking read sees them, in memory: each received message's chat, its place
 * in the chat and its WhatsApp key (the inbound store's read target), the chat's unread set (the
 * chat index), and the records (a message the account sent too).
 */
export class MemoryInbox {
  private seq = 0;
  readonly received = new Map<string, { deviceId: string; chatId: string; seq: number; key: ReadKey }>();
  readonly unreadOf = new Map<string, Set<string>>();
  readonly records = new Map<string, MessageRecord>();

  /** A message a contact wrote (its WhatsApp id is what its receipt names). */
  receive(deviceId: string, from: string): { id: string; waId: string } {
    const n = ++this.seq;
    const id = `in-${n}`;
    const waId = `WA${n}`;
    this.received.set(id, {
      deviceId,
      chatId: from,
      seq: n,
      key: { remoteJid: `${from}@s.whatsapp.net`, id: waId },
    });
    this.unread(deviceId, from).add(id);
    this.records.set(id, {
      messageId: id,
      deviceId,
      direction: 'inbound',
      status: 'received',
    } as unknown as MessageRecord);
    return { id, waId };
  }

  private unread(deviceId: string, chatId: string): Set<string> {
    const key = `${deviceId}\n${chatId}`;
    if (!this.unreadOf.has(key)) this.unreadOf.set(key, new Set());
    return this.unreadOf.get(key)!;
  }

  readonly chats: ReadDeps['chats'] = {
    get: async (deviceId, chatId) =>
      this.unreadOf.has(`${deviceId}\n${chatId}`) ? ({ id: chatId, type: 'direct' } as ChatRow) : undefined,
    unread: async (deviceId, chatId, upTo) => {
      const ids = [...this.unread(deviceId, chatId)].sort(
        (a, b) => this.received.get(a)!.seq - this.received.get(b)!.seq,
      );
      if (upTo === undefined) return ids;
      const at = this.received.get(upTo);
      return at ? ids.filter((id) => this.received.get(id)!.seq <= at.seq) : [];
    },
    markRead: async (deviceId, chatId, ids) => {
      const set = this.unread(deviceId, chatId);
      const marked = ids.filter((id) => set.delete(id)).length;
      return { marked, unread: set.size };
    },
  };
  readonly inbound: ReadDeps['inbound'] = {
    readTarget: async (deviceId, id) => {
      const m = this.received.get(id);
      return m && m.deviceId === deviceId ? { chatId: m.chatId, key: m.key } : undefined;
    },
  };
  readonly messages = {
    get: async (deviceId: string, id: string) => {
      const r = this.records.get(id);
      return r && r.deviceId === deviceId ? r : undefined;
    },
  };
}

/** A connected device's holder, its inbox and the deps of marking read over them. */
export function readFixture(deviceId: string) {
  const mh = new MemoryHolder();
  const inbox = new MemoryInbox();
  const deps: ReadDeps & { messages: MemoryInbox['messages'] } = {
    chats: inbox.chats,
    inbound: inbox.inbound,
    messages: inbox.messages,
    metrics: createMetrics(),
    holder: mh.holder,
  };
  mh.connect(deviceId);
  return { mh, inbox, deps };
}

/** A holder sending the receipts; `receiptsShown` as the account's privacy says. */
export const receipts = (receiptsShown?: boolean) => (): DeviceCommandReply =>
  receiptsShown === undefined ? { ok: true } : { ok: true, data: { receiptsShown } };

/** The receipts counted, by how and whether they were shown (`request/self`…). */
export const shownCount = async (deps: Pick<ReadDeps, 'metrics'>) =>
  Object.fromEntries(
    (await deps.metrics.readReceipts.get()).values.map((v) => [`${v.labels.how}/${v.labels.shown}`, v.value]),
  );
