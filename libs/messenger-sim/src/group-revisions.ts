/**
 * What a group member's phone sends besides a text (see `POST /groups/:id/send`): an edit or a
 * delete for everyone of its own earlier group message, within WhatsApp's windows (revisions.ts),
 * or a reaction to a message of the group, or a text that mentions members (`mentions`: phones or
 * `<digits>@lid`). Built here, sent by `sendToGroup` like a text.
 */
import type { proto } from '@whiskeysockets/baileys';
import type { SimUser } from './directory.js';
import { inboundRevision } from './revisions.js';
import { SimError } from './sim-error.js';

const MAX_ID = 128;
const MAX_TEXT = 65_536;

/** The member's message for a `{ edit: { id, text } }`, `{ delete: { id } }` or `{ reaction: { id, emoji } }` body; undefined for a text. */
export function groupMemberMessage(
  member: SimUser,
  gjid: string,
  body: Record<string, unknown>,
): proto.IMessage | undefined {
  const field = (['edit', 'delete', 'reaction'] as const).find((f) => body[f] !== undefined);
  if (!field) return mentioningText(body);
  const input = body[field] as Record<string, unknown> | null;
  const id = input?.id;
  if (typeof id !== 'string' || !id || id.length > MAX_ID) throw new SimError(`${field}.id is required`, 400);
  if (field === 'reaction') {
    const emoji = input!.emoji;
    if (typeof emoji !== 'string' || emoji.length > 16)
      throw new SimError('reaction.emoji must be a string ("" removes it)', 400);
    return {
      reactionMessage: {
        key: { remoteJid: gjid, fromMe: false, id },
        text: emoji,
        senderTimestampMs: Date.now(),
      },
    };
  }
  const text = field === 'edit' ? input!.text : undefined;
  if (field === 'edit' && (typeof text !== 'string' || !text || text.length > MAX_TEXT))
    throw new SimError('edit.text is required', 400);
  const message = inboundRevision(member, gjid, id, text as string | undefined);
  if ('refused' in message) throw new SimError(message.refused, 409);
  return message;
}

/** A text with `mentions` as WhatsApp apps send it (`extendedTextMessage` naming each JID); undefined without. */
function mentioningText(body: Record<string, unknown>): proto.IMessage | undefined {
  const { text, mentions } = body;
  if (mentions === undefined) return undefined;
  if (typeof text !== 'string' || !text || text.length > MAX_TEXT)
    throw new SimError('text is required', 400);
  if (
    !Array.isArray(mentions) ||
    mentions.length === 0 ||
    mentions.length > 100 ||
    !mentions.every((m) => typeof m === 'string' && /^(\d{7,15}|\d{1,20}@lid)$/.test(m))
  )
    throw new SimError('mentions must be 1 to 100 phone numbers or <digits>@lid', 400);
  const mentionedJid = (mentions as string[]).map((m) => (m.endsWith('@lid') ? m : `${m}@s.whatsapp.net`));
  return { extendedTextMessage: { text, contextInfo: { mentionedJid } } };
}
