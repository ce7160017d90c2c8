import {
  audienceJid,
  keys,
  newMessageId,
  PRIORITY,
  STATUS_FONTS,
  STATUS_JID,
  STATUS_LIMITS,
  statusBodyProblems,
  type MessageContent,
  type StatusBody,
  type StatusContent,
} from '@mgw/contracts';
import type { RedisClient } from '@mgw/common';
import type { StatusStore } from '@mgw/store';
import type { MessageAcceptor } from '../../enqueue/message-acceptor.js';
import { invalid, isRefusal, type Refusal } from '../../enqueue/refusal.js';
import { contentOf, dueAt } from '../send/index.js';

export interface StatusDeps {
  acceptor: Pick<MessageAcceptor, 'accept'>;
  /** The device's chats (`audience: "contacts"`). */
  redis: Pick<RedisClient, 'scard' | 'smembers'>;
  statuses: Pick<StatusStore, 'create' | 'forget'>;
}

export interface StatusAccepted {
  kind: 'accepted';
  messageId: string;
  batchId: string;
  audienceSize: number;
  sendAt?: string;
}

/**
 * POST /statuses: one message to `status@broadcast` carrying its audience, accepted through the
 * send pipeline like any message — one job, paced and capped as one message, held by `sendAt`,
 * and a batch of one (its `batchId`) so pause, resume and cancel steer it as they steer batches.
 */
export async function postStatus(
  deps: StatusDeps,
  deviceId: string,
  body: StatusBody,
): Promise<StatusAccepted | Refusal> {
  const problems = statusBodyProblems(body);
  if (problems.length) return invalid(problems);
  const audience =
    body.audience === 'contacts' ? await chatsAudience(deps.redis, deviceId) : body.audience.map(audienceJid);
  if (isRefusal(audience)) return audience;
  const shared = contentOf({
    to: STATUS_JID,
    text: body.text,
    ...(body.attachment ? { attachment: body.attachment } : {}),
  });
  if (isRefusal(shared)) return shared;
  const status: StatusContent = {
    audience,
    ...(body.backgroundColor ? { backgroundColor: argb(body.backgroundColor) } : {}),
    ...(body.font ? { font: STATUS_FONTS[body.font] } : {}),
  };
  const content: MessageContent = { ...shared.content, status };
  const sendAt = dueAt(body.sendAt);
  const messageId = newMessageId();
  // Its batch of one is named by the status itself: a batch whose id has a status record is a
  // status (the Batches page labels it so).
  const batchId = messageId;
  await deps.statuses.create(
    deviceId,
    messageId,
    audience,
    sendAt ?? Date.now(),
    body.attachment?.type ?? 'text',
  );
  const accepted = await deps.acceptor
    .accept({
      deviceId,
      kind: 'send',
      recipients: [STATUS_JID],
      content,
      ...(shared.media ? { media: shared.media } : {}),
      ...(sendAt !== undefined ? { sendAt } : {}),
      batchId,
      messageIds: [messageId],
      priority: PRIORITY.send,
    })
    .catch(async (err: unknown) => {
      await deps.statuses.forget(deviceId, messageId).catch(() => undefined);
      throw err;
    });
  if (isRefusal(accepted)) {
    await deps.statuses.forget(deviceId, messageId);
    return accepted;
  }
  return {
    kind: 'accepted',
    messageId,
    batchId,
    audienceSize: audience.length,
    ...(sendAt !== undefined ? { sendAt: new Date(sendAt).toISOString() } : {}),
  };
}

/**
 * `"audience": "contacts"`: every chat of the account (who wrote to it, or whom it wrote to), as
 * the first-contact cap knows them. More than the bound is refused whole: a status is never cut
 * to an audience the client did not choose.
 */
async function chatsAudience(redis: StatusDeps['redis'], deviceId: string): Promise<string[] | Refusal> {
  const key = keys.deviceChats(deviceId);
  const count = await redis.scard(key);
  if (count > STATUS_LIMITS.audience)
    return invalid([
      {
        path: ['audience'],
        message: `"audience" "contacts" names ${count} chats: a status goes to at most ${STATUS_LIMITS.audience} viewers, list them instead`,
      },
    ]);
  const chats = count ? await redis.smembers(key) : [];
  const jids = [...new Set(chats.filter((c) => /^\d{5,24}(@lid)?$/.test(c)).map(audienceJid))];
  if (jids.length === 0)
    return invalid([
      { path: ['audience'], message: '"audience" "contacts" names nobody: the account has no chats yet' },
    ]);
  // SCARD and SMEMBERS are two reads: a chat added between them must not pass the bound.
  if (jids.length > STATUS_LIMITS.audience)
    return invalid([
      {
        path: ['audience'],
        message: `"audience" "contacts" names more than ${STATUS_LIMITS.audience} chats`,
      },
    ]);
  return jids;
}

/** `#RRGGBB` (opaque) or `#AARRGGBB` as `#AARRGGBB`. */
function argb(color: string): string {
  const hex = color.slice(1).toUpperCase();
  return `#${hex.length === 6 ? `FF${hex}` : hex}`;
}
