import {
  PRIORITY,
  contentPlaceholders,
  kindFieldsOf,
  newMessageId,
  personalisationProblems,
  seededMessageId,
  phoneOf,
  usedVars,
  type MessageContent,
  type RecipientVars,
  type SendBody,
  type SendTo,
} from '@mgw/contracts';
import { reactionTarget, type ReactionTargetDeps } from './reaction-target.js';
import type { MediaStore } from '@mgw/store';
import { attachmentTooLarge, decodeAttachment } from './attachment-size.js';
import { acceptOrUnknown, type AcceptUnknown, type RateLimitHit } from '../../enqueue/job-writer.js';
import type { MessageAcceptor } from '../../enqueue/message-acceptor.js';
import {
  blockedRecipient,
  blocklistAddress,
  invalid,
  isRefusal,
  refused,
  type BlocklistLookup,
  type Refusal,
} from '../../enqueue/refusal.js';
import { reviseMessage, type ReviseDeps, type ReviseOutcome } from './revise-message.js';
import { withUsernamesResolved, type UsernameRecipientDeps } from './username-recipients.js';
import { cloudSendRefusal, type CloudSendDeps } from '../cloud-send/index.js';

export interface SendDeps extends ReviseDeps, ReactionTargetDeps {
  acceptor: Pick<MessageAcceptor, 'accept'>;
  messages: ReviseDeps['messages'];
  /** Uploaded media (`attachment.mediaId`): only the device's own objects. */
  media: Pick<MediaStore, 'get'>;
  blocklist?: BlocklistLookup;
  /** `to` naming usernames (`@alice.shop`): resolved to their LIDs (username-recipients.ts); none: refused. */
  usernames?: UsernameRecipientDeps;
  /** The Cloud API's rules: templates on cloud devices only, the 24-hour window (features/cloud-send). */
  cloudSend: CloudSendDeps;
}

/**
 * What a /send comes to: its messages accepted (one, or a batch's), or an edit or delete done
 * (`reviseMessage`), or why it was refused.
 */
export type SendOutcome =
  | { kind: 'accepted'; messageId: string }
  | { kind: 'list_accepted'; batchId: string; messageIds: string[] }
  | AcceptUnknown
  | ReviseOutcome;

/**
 * The request's shared content, once, plus the attachment's bytes when it came as base64 (refused
 * when they are over the spec's 10 MB).
 */
export function contentOf(body: SendBody): { content: MessageContent; media?: Buffer } | Refusal {
  const content: MessageContent = {
    ...(body.text !== undefined ? { text: body.text } : {}),
    ...(body.existingMessageId !== undefined ? { existingMessageId: body.existingMessageId } : {}),
    ...(body.linkPreview === false ? { linkPreview: false as const } : {}),
    ...kindFieldsOf(body),
    ...(body.mentions !== undefined ? { mentions: body.mentions } : {}),
  };
  if (!body.attachment) return { content };
  const { type, url, base64, mediaId, filename, caption, mimeType } = body.attachment;
  const media = base64 !== undefined ? decodeAttachment(base64) : undefined;
  if (base64 !== undefined && !media) return refused('attachment_too_large');
  content.attachment = {
    type,
    // An uploaded object's size and type are filled in by `withUploadedMedia`.
    source: media
      ? { stored: true, size: media.length }
      : mediaId !== undefined
        ? { mediaId, size: 0 }
        : { url: url! },
    ...(filename !== undefined ? { filename } : {}),
    ...(caption !== undefined ? { caption } : {}),
    ...(mimeType !== undefined ? { mimeType } : {}),
  };
  return { content, media };
}

/**
 * An attachment named by `mediaId`: the device's own object (404 for any other id, another
 * device's too), its size and, unless the request gave them, its MIME type and file name. Only its
 * id goes into the content: a list of any length adds no bytes of it to Redis.
 */
export async function withUploadedMedia(
  deps: Pick<SendDeps, 'media'>,
  deviceId: string,
  content: MessageContent,
): Promise<Refusal | undefined> {
  const att = content.attachment;
  if (!att || !('mediaId' in att.source)) return undefined;
  const obj = await deps.media.get(deviceId, att.source.mediaId);
  if (!obj) return refused('media_not_found');
  att.source = { mediaId: obj.mediaId, size: obj.size };
  att.mimeType ??= obj.mimeType;
  if (att.filename === undefined && obj.fileName) att.filename = obj.fileName;
  return undefined;
}

/**
 * A personalised request (any `to` entry is an object): each recipient's variables — only those
 * the content uses — or a refusal naming the recipients that lack one. A request whose entries are
 * all plain numbers is not personalised: its text is sent as written, `{{` and all.
 */
export function personalisation(
  entries: SendTo[],
  content: MessageContent,
): { content: MessageContent; vars?: RecipientVars[] } | Refusal {
  if (entries.every((e) => typeof e === 'string')) return { content };
  const given = entries.map((e) => (typeof e === 'string' ? undefined : e.vars));
  const problems = personalisationProblems(content, given);
  if (problems.length > 0) return invalid(problems);
  const names = contentPlaceholders(content);
  // Nothing to fill in: sent as one text, no variables stored.
  if (names.length === 0) return { content };
  return { content: { ...content, personalised: true }, vars: given.map((v) => usedVars(v, names)) };
}

/** `sendAt` (validated) as epoch ms; a time already past is sent now, like no `sendAt`. */
export function dueAt(sendAt: string | undefined): number | undefined {
  if (sendAt === undefined) return undefined;
  const at = Date.parse(sendAt);
  return at > Date.now() ? at : undefined;
}

/**
 * A request refused before its accept call, whose single recipient that call would have looked
 * for on the blocklist (`blocklistCheck`): the blocklist is asked now, so a blocked recipient is
 * what the request is refused for, whatever else is wrong with it.
 */
async function blockedFirst(
  deps: Pick<SendDeps, 'blocklist'>,
  deviceId: string,
  blocklistCheck: string | undefined,
  refusal: Refusal,
): Promise<Refusal> {
  if (blocklistCheck === undefined) return refusal;
  return (await blockedRecipient(deps.blocklist, deviceId, blocklistCheck)) ?? refusal;
}

/**
 * POST /send: one job per recipient, accepted at once. A single `to` comes to its messageId; a
 * list (even of one) to a batch id plus the messageIds in `to` order.
 */
export async function sendMessage(
  deps: SendDeps,
  deviceId: string,
  request: SendBody,
  hit?: RateLimitHit,
  /** An `Idempotency-Key`'s seed: the ids are the key's, the same in every run of it. */
  seed?: string,
): Promise<SendOutcome> {
  // Usernames in `to` become their LIDs before anything reads `to` (an edit's recipient too).
  // (Most sends name none: the body comes back as it is, no lookup, no await.)
  const resolving = withUsernamesResolved(deps.usernames, deviceId, request);
  const named = resolving instanceof Promise ? await resolving : resolving;
  if (isRefusal(named)) return named;
  const body = named;
  // An edit or delete writes through its own script: its hit was counted before (routes/send.ts).
  if (body.edit || body.delete) return reviseMessage(deps, deviceId, body);
  if (body.attachment?.base64 !== undefined && attachmentTooLarge(body.attachment.base64))
    return refused('attachment_too_large');
  const isList = Array.isArray(body.to);
  const entries = isList ? (body.to as SendTo[]) : [body.to as SendTo];
  // A single recipient is looked for on the account's blocklist by the accept call that would
  // write it (no round trip of its own before it).
  const blocklistCheck = isList
    ? undefined
    : blocklistAddress(deps.blocklist, deviceId, phoneOf(entries[0]!));
  const shared = contentOf(body);
  if (isRefusal(shared)) return blockedFirst(deps, deviceId, blocklistCheck, shared);
  const { content, media } = shared;
  const uploaded = await withUploadedMedia(deps, deviceId, content);
  if (uploaded) return blockedFirst(deps, deviceId, blocklistCheck, uploaded);
  if (body.reaction) {
    const target = await reactionTarget(deps, deviceId, body.reaction, body.to);
    if (isRefusal(target)) return blockedFirst(deps, deviceId, blocklistCheck, target);
    content.reactionTarget = target;
  }
  // A linked device's free-form send: answered at once, no await (cloud-send.ts).
  const ruling = cloudSendRefusal(deps.cloudSend, deviceId, body);
  const cloudRefusal = ruling instanceof Promise ? await ruling : ruling;
  if (cloudRefusal) return blockedFirst(deps, deviceId, blocklistCheck, cloudRefusal);
  const personal = personalisation(entries, content);
  if (isRefusal(personal)) return blockedFirst(deps, deviceId, blocklistCheck, personal);
  const sendAt = dueAt(body.sendAt);
  const ids = seed === undefined ? undefined : idsOf(seed, entries.length);
  const batchId = isList ? (ids?.batchId ?? newMessageId()) : undefined;
  const accepted = await acceptOrUnknown(ids, batchId, () =>
    deps.acceptor.accept({
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
      ...(blocklistCheck !== undefined ? { blocklistCheck } : {}),
      ...(ids ? { idempotent: true, messageIds: ids.messageIds, contentId: ids.contentId } : {}),
    }),
  );
  if (isRefusal(accepted) || accepted.kind === 'unknown') return accepted;
  const messageIds = accepted.jobs.map((j) => j.messageId);
  return batchId
    ? { kind: 'list_accepted', batchId, messageIds }
    : { kind: 'accepted', messageId: messageIds[0]! };
}

/** The ids of an idempotent request's messages, its batch and its content, from its key's seed. */
export function idsOf(
  seed: string,
  count: number,
): { messageIds: string[]; batchId: string; contentId: string } {
  return {
    messageIds: Array.from({ length: count }, (_, i) => seededMessageId(seed, i)),
    batchId: seededMessageId(seed, 'batch'),
    contentId: seededMessageId(seed, 'content'),
  };
}
