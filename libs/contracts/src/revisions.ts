import type { ObjectSchema } from 'joi';
import { Joi } from './text.js';
import { STRING_LIMITS } from './limits.js';

/**
 * Edits and deletes of our own sent messages (`edit` / `delete` on POST /send), and WhatsApp's
 * windows for them. WhatsApp lets a sender edit a text for 15 minutes after it was sent, and
 * delete a message for everyone for 2 days and 12 hours (60 hours, since August 2022); the apps
 * refuse later ones and so does the server for edits. Baileys enforces neither: the gateway does,
 * from the target's `sentAt`, at the API (409) and again right before the socket write.
 */
export const EDIT_WINDOW_MS = 15 * 60_000;
export const DELETE_WINDOW_MS = 60 * 60 * 60_000;

/** `edit` of a POST /send body: the new text of one of our sent texts (our messageId). */
export interface EditInput {
  messageId: string;
  text: string;
}

/** `delete` of a POST /send body: one of our messages (our messageId), deleted for everyone. */
export interface DeleteInput {
  messageId: string;
}

/** One entry of a record's edit history (GET /messages/:id `edits`), oldest first. */
export interface EditEntry {
  text: string;
  at: string;
}

const targetId = Joi.string().min(1).max(STRING_LIMITS.existingMessageId).required();

export const editSchema = Joi.object<EditInput>({
  messageId: targetId,
  text: Joi.string().min(1).max(STRING_LIMITS.text).required(),
});

export const deleteSchema = Joi.object<DeleteInput>({ messageId: targetId });

/** `linkPreview` of a text: true (default) fetches a preview of its first URL. */
export const linkPreviewSchema = Joi.boolean();

/** The send fields an edit or a delete cannot be combined with (each is a message of its own). */
export const REVISION_EXCLUSIVE = ['text', 'attachment', 'existingMessageId', 'sendAt'] as const;

/** Adds the rules of `edit` / `delete` to the POST /send schema: alone, one of them, never with content. */
export function withRevisionRules<T>(schema: ObjectSchema<T>): ObjectSchema<T> {
  return schema
    .without('edit', [...REVISION_EXCLUSIVE, 'delete'])
    .without('delete', [...REVISION_EXCLUSIVE, 'linkPreview'])
    .messages({ 'object.without': '{{#mainWithLabel}} cannot be combined with {{#peerWithLabel}}' });
}
