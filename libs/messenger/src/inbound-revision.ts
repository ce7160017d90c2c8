import { normalizeMessageContent, proto, type WAMessage } from '@whiskeysockets/baileys';
import { isGroupAddress, type ContactIdentity } from '@mgw/contracts';
import { contactOf, identityOfJids } from './inbound-message.js';

/** A contact edited (`text`) or deleted for everyone (no `text`) a message it sent the account. */
export interface InboundRevision {
  /** The WhatsApp id of the edit or revoke itself. */
  platformMessageId: string;
  /** The contact's phone number (digits), when the chat tells it (absent for a LID-only chat). */
  from?: string;
  /** Who revised: phone and/or LID as the message tells them (a group's: the member who wrote). */
  contact: ContactIdentity;
  /** The WhatsApp id of the message it changes. */
  targetPlatformMessageId: string;
  text?: string;
  at: Date;
}

/**
 * The edit or revoke of a contact's own earlier message (a `protocolMessage` naming it by id), in a
 * one-to-one chat addressed by phone or by LID, or by a member in a group; undefined for anything
 * else. Who revised is named as `parseInbound` names who wrote, so the two can be compared.
 */
export function parseRevision(msg: WAMessage): InboundRevision | undefined {
  if (msg.key.fromMe || !msg.key.id || !msg.message) return undefined;
  const group = isGroupAddress(msg.key.remoteJid);
  const contact = group ? identityOfJids(msg.key.participant, msg.key.participantAlt) : contactOf(msg.key);
  const p = normalizeMessageContent(msg.message)?.protocolMessage;
  const targetId = p?.key?.id;
  // The key is in the sender's perspective (`fromMe: true`): that the contact wrote the target is
  // checked against the inbound record (MessageRevisions), not here.
  if ((!contact.phone && !contact.lid) || !p || !targetId) return undefined;
  const ts = Number(msg.messageTimestamp ?? 0);
  const base = {
    platformMessageId: msg.key.id,
    ...(contact.phone ? { from: contact.phone } : {}),
    contact,
    targetPlatformMessageId: targetId,
    at: ts > 0 ? new Date(ts * 1000) : new Date(),
  };
  if (p.type === proto.Message.ProtocolMessage.Type.REVOKE) return base;
  if (p.type !== proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) return undefined;
  const edited = normalizeMessageContent(p.editedMessage);
  const text = edited?.conversation ?? edited?.extendedTextMessage?.text ?? undefined;
  return text === undefined ? undefined : { ...base, text };
}
