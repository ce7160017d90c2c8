/**
 * WhatsApp Business labels and a chat's archive, pin and mute as Baileys reports them from
 * app-state sync (`labels.edit`, `labels.association`, `chats.update`): a label edited, a chat
 * labelled or unlabelled, archived, pinned or muted — on the phone, on another linked device, or by
 * this one.
 */
import type { Chat } from '@whiskeysockets/baileys';
import { phoneOfJid, type Label } from '@mgw/contracts';
import type { WASocket } from './socket.js';

export type LabelNotice =
  | { kind: 'edited'; label: Label }
  | { kind: 'association'; labelId: string; chat: string; labeled: boolean }
  | { kind: 'chat-state'; chat: string; archived?: boolean; pinned?: boolean; mutedUntil?: Date | null };

/** A chat JID as the API names chats: a phone's digits, else the JID (`…@lid`, `…@g.us`). */
export function chatOf(jid: string): string {
  return phoneOfJid(jid) ?? jid;
}

export function watchLabels(sock: WASocket, tell: (notice: LabelNotice) => void): void {
  sock.ev.on('labels.edit', (l) =>
    tell({
      kind: 'edited',
      label: {
        id: String(l.id),
        name: l.name ?? '',
        color: Number(l.color ?? 0),
        deleted: !!l.deleted,
        ...(l.predefinedId != null ? { predefinedId: String(l.predefinedId) } : {}),
      },
    }),
  );
  sock.ev.on('chats.update', (updates) => {
    for (const notice of chatStatesOf(updates)) tell(notice);
  });
  sock.ev.on('labels.association', ({ association, type }) => {
    // Labels on single messages are not reported: the API labels chats.
    if (association.type !== 'label_jid') return;
    tell({
      kind: 'association',
      labelId: association.labelId,
      chat: chatOf(association.chatId),
      labeled: type === 'add',
    });
  });
}

/**
 * The archive, pin and mute changes among chat updates (Baileys' app-state actions: `archived`,
 * `pinned` a timestamp or null, `muteEndTime` a timestamp in ms or null). Other chat updates
 * (unread counts, names, conversation timestamps) are not reported.
 */
export function chatStatesOf(updates: readonly Partial<Chat>[]): LabelNotice[] {
  const notices: LabelNotice[] = [];
  for (const u of updates) {
    if (!u.id) continue;
    const state = {
      ...(typeof u.archived === 'boolean' ? { archived: u.archived } : {}),
      ...(u.pinned !== undefined ? { pinned: !!u.pinned } : {}),
      ...(u.muteEndTime !== undefined
        ? { mutedUntil: u.muteEndTime ? new Date(Number(u.muteEndTime)) : null }
        : {}),
    };
    if (Object.keys(state).length) notices.push({ kind: 'chat-state', chat: chatOf(u.id), ...state });
  }
  return notices;
}
