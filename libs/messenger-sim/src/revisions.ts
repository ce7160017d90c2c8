import { proto } from '@whiskeysockets/baileys';
import type { InboxMessage, SimUser } from './directory.js';

/**
 * Edits and deletes for everyone, as a contact's phone sees them (issue 29). An edit or a revoke is
 * a `protocolMessage` naming the earlier message by id; the phone shows it as its own inbox entry
 * (`type: "edit"` with the new text, or `type: "delete"`, and `targetId`) and applies it to the
 * earlier message (`editedText`, `deleted`). WhatsApp's windows hold as the apps enforce them: an
 * edit more than 15 minutes, or a delete more than 60 hours, after the earlier message arrived is
 * not applied (`refused: "window"` on its entry). The same windows bound what a contact can send
 * the account (see `inboundRevision`).
 */
export const SIM_EDIT_WINDOW_MS = 15 * 60_000;
export const SIM_DELETE_WINDOW_MS = 60 * 60 * 60_000;

export type RevisionFields = Pick<InboxMessage, 'type' | 'text' | 'targetId'>;

/** The inbox fields of an edit or a revoke; undefined for any other message. */
export function describeRevision(message: proto.IMessage): RevisionFields | undefined {
  const p = message.protocolMessage;
  if (!p?.key?.id) return undefined;
  if (p.type === proto.Message.ProtocolMessage.Type.REVOKE) return { type: 'delete', targetId: p.key.id };
  if (p.type !== proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) return undefined;
  const edited = p.editedMessage;
  const text = edited?.conversation ?? edited?.extendedTextMessage?.text ?? undefined;
  return { type: 'edit', targetId: p.key.id, ...(text !== undefined ? { text } : {}) };
}

/** Applies an arrived edit or delete to the message it names (of the same sender), within the window. */
export function applyRevision(user: SimUser, entry: InboxMessage, now = Date.now()): void {
  if (!entry.targetId || (entry.type !== 'edit' && entry.type !== 'delete')) return;
  const target = user.inbox.find((m) => m.id === entry.targetId && m.from === entry.from);
  if (!target) {
    entry.refused = 'unknown_target';
    return;
  }
  const window = entry.type === 'edit' ? SIM_EDIT_WINDOW_MS : SIM_DELETE_WINDOW_MS;
  if (now - Date.parse(target.receivedAt) > window) {
    entry.refused = 'window';
    return;
  }
  if (entry.type === 'edit') target.editedText = entry.text;
  else target.deleted = true;
}

/** What a contact's phone sent to whom, and when (bounded), for the window of its own edits and deletes. */
const sentByContact = new WeakMap<SimUser, Map<string, number>>();
const MAX_REMEMBERED = 10_000;

export function rememberSent(contact: SimUser, id: string, at = Date.now()): void {
  let sent = sentByContact.get(contact);
  if (!sent) sentByContact.set(contact, (sent = new Map()));
  sent.set(id, at);
  if (sent.size > MAX_REMEMBERED) sent.delete(sent.keys().next().value!);
}

/**
 * The protocol message of a contact's edit (`text`) or delete (no text) of its message `id`, or why
 * the phone refuses it: it never sent that message, or WhatsApp's window has passed.
 */
export function inboundRevision(
  contact: SimUser,
  accountJid: string,
  id: string,
  text: string | undefined,
  now = Date.now(),
): proto.IMessage | { refused: string } {
  const sentAt = sentByContact.get(contact)?.get(id);
  if (sentAt === undefined) return { refused: `${contact.phone} sent no message ${id}` };
  const window = text === undefined ? SIM_DELETE_WINDOW_MS : SIM_EDIT_WINDOW_MS;
  if (now - sentAt > window) return { refused: `message ${id} is past WhatsApp's window` };
  const key = { remoteJid: accountJid, fromMe: true, id };
  if (text === undefined)
    return { protocolMessage: { key, type: proto.Message.ProtocolMessage.Type.REVOKE } };
  return {
    protocolMessage: {
      key,
      type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
      editedMessage: { conversation: text },
      timestampMs: now,
    },
  };
}
