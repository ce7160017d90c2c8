import {
  PRIORITY,
  contentPlaceholders,
  kindFieldsOf,
  newMessageId,
  personalisationProblems,
  phoneOf,
  usedVars,
  type MessageContent,
  type RecipientVars,
  type SendBody,
  type SendTo,
} from '@mgw/contracts';
import { ApiError } from '../http/api-error.js';
import { reactionTarget, type ReactionTargetDeps } from './reaction-target.js';
import { assertAttachmentSize, decodeAttachment } from './attachment-size.js';
import type { Outcome } from '../http/idempotency.js';
import type { MessageAcceptor } from './message-acceptor.js';
import { reviseMessage, type ReviseDeps } from './revise-message.js';
import type { SendHit } from '../http/send-rate-limit.js';

export interface SendDeps extends ReviseDeps, ReactionTargetDeps {
  acceptor: MessageAcceptor;
}

/** The request's shared content, once, plus the attachment's bytes when it came as base64. */
export function contentOf(body: SendBody): { content: MessageContent; media?: Buffer } {
  const content: MessageContent = {
    ...(body.text !== undefined ? { text: body.text } : {}),
    ...(body.existingMessageId !== undefined ? { existingMessageId: body.existingMessageId } : {}),
    ...(body.linkPreview === false ? { linkPreview: false as const } : {}),
    ...kindFieldsOf(body),
    ...(body.mentions !== undefined ? { mentions: body.mentions } : {}),
  };
  if (!body.attachment) return { content };
  const { type, url, base64, filename, caption, mimeType } = body.attachment;
  const media = base64 !== undefined ? decodeAttachment(base64) : undefined;
  content.attachment = {
    type,
    source: media ? { stored: true, size: media.length } : { url: url! },
    ...(filename !== undefined ? { filename } : {}),
    ...(caption !== undefined ? { caption } : {}),
    ...(mimeType !== undefined ? { mimeType } : {}),
  };
  return { content, media };
}

/**
 * A personalised request (any `to` entry is an object): each recipient's variables — only those
 * the content uses — or a 400 naming the recipients that lack one. A request whose entries are
 * all plain numbers is not personalised: its text is sent as written, `{{` and all.
 */
function personalisation(
  entries: SendTo[],
  content: MessageContent,
): { content: MessageContent; vars?: RecipientVars[] } {
  if (entries.every((e) => typeof e === 'string')) return { content };
  const given = entries.map((e) => (typeof e === 'string' ? undefined : e.vars));
  const problems = personalisationProblems(content, given);
  if (problems.length > 0) throw ApiError.invalid(problems);
  const names = contentPlaceholders(content);
  // Nothing to fill in: sent as one text, no variables stored.
  if (names.length === 0) return { content };
  return { content: { ...content, personalised: true }, vars: given.map((v) => usedVars(v, names)) };
}

/** `sendAt` (validated) as epoch ms; a time already past is sent now, like no `sendAt`. */
function dueAt(sendAt: string | undefined): number | undefined {
  if (sendAt === undefined) return undefined;
  const at = Date.parse(sendAt);
  return at > Date.now() ? at : undefined;
}

/**
 * POST /send: one job per recipient, accepted at once (202). A single `to` answers with its
 * messageId; a list (even of one) with a batch id plus the messageIds in `to` order.
 */
export async function sendMessage(
  deps: SendDeps,
  deviceId: string,
  body: SendBody,
  hit?: SendHit,
): Promise<Outcome> {
  // An edit or delete writes through its own script: its hit was counted before (routes/send.ts).
  if (body.edit || body.delete) return reviseMessage(deps, deviceId, body);
  if (body.attachment?.base64 !== undefined) assertAttachmentSize(body.attachment.base64);
  const isList = Array.isArray(body.to);
  const entries = isList ? (body.to as SendTo[]) : [body.to as SendTo];
  const { content, media } = contentOf(body);
  if (body.reaction) content.reactionTarget = await reactionTarget(deps, deviceId, body.reaction, body.to);
  const personal = personalisation(entries, content);
  const sendAt = dueAt(body.sendAt);
  const batchId = isList ? newMessageId() : undefined;
  const jobs = await deps.acceptor.accept({
    deviceId,
    kind: 'send',
    recipients: entries.map(phoneOf),
    content: personal.content,
    ...(media ? { media } : {}),
    ...(personal.vars ? { vars: personal.vars } : {}),
    ...(sendAt !== undefined ? { sendAt } : {}),
    ...(batchId ? { batchId } : {}),
    priority: PRIORITY.send,
    ...(hit ? { hit } : {}),
  });
  const messageIds = jobs.map((j) => j.messageId);
  return {
    status: 202,
    body: isList
      ? { success: true, messageId: batchId, messageIds }
      : { success: true, messageId: messageIds[0] },
  };
}
