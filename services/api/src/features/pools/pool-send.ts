import {
  PRIORITY,
  USERNAME_ERRORS,
  isGroupJid,
  isUsernameAddress,
  newMessageId,
  phoneOf,
  type SendBody,
  type SendTo,
} from '@mgw/contracts';
import { controlDeviceBatch } from '../batches/index.js';
import type { ApiServices } from '../../api-services.js';
import { isRefusal, invalid, refused } from '../../enqueue/refusal.js';
import {
  attachmentTooLarge,
  contentOf,
  dueAt,
  personalisation,
  reviseMessage,
  type SendOutcome,
} from '../send/index.js';
import { poolDevices, poolMembers, spread, type PoolDevice } from './pool-devices.js';

export type PoolSendDeps = Pick<
  ApiServices,
  'redis' | 'acceptor' | 'messages' | 'revisions' | 'kinds' | 'poolBatches' | 'config' | 'logger' | 'batches'
>;

/**
 * Which device sends to each recipient: the one that sent to it before through this pool while it
 * still takes its share (sticky), else the device furthest below its fair part by what each may
 * still send today and its health (`spread`). With no device taking a share, the linked ones hold
 * the messages (each waits with its device's reason, and moves when a device takes shares again).
 */
async function assign(
  deps: PoolSendDeps,
  poolId: string,
  devices: PoolDevice[],
  recipients: string[],
): Promise<string[] | undefined> {
  let takers = devices.filter((d) => !d.dropped);
  if (takers.length === 0) takers = devices.filter((d) => d.linked).map((d) => ({ ...d, weight: 1 }));
  if (takers.length === 0) return undefined;
  const names = new Set(takers.map((d) => d.deviceId));
  const sticky = await deps.poolBatches.stickyDevices(poolId, recipients);
  const out: (string | undefined)[] = sticky.map((d) => (d && names.has(d) ? d : undefined));
  const given = new Map<string, number>();
  for (const d of out) if (d) given.set(d, (given.get(d) ?? 0) + 1);
  const free = out.flatMap((d, i) => (d ? [] : [i]));
  const spreadTo = spread(takers, given, free.length);
  free.forEach((i, k) => (out[i] = spreadTo[k]));
  return out as string[];
}

/**
 * POST /send with a token linked to a pool: a list spread over the pool's devices (one batch id,
 * each device's part an ordinary batch of its own under that id), a single message to the
 * recipient's device. An edit or delete goes to the device that holds the message. Group chats and
 * reactions belong to one account: they are sent with a device's token.
 */
export async function sendThroughPool(
  deps: PoolSendDeps,
  poolId: string,
  body: SendBody,
): Promise<SendOutcome> {
  if (body.edit || body.delete) {
    const owner = await deps.poolBatches.owner(poolId, (body.edit ?? body.delete)!.messageId);
    if (!owner) return refused('revision_target_not_found');
    return reviseMessage(deps, owner, body);
  }
  if (body.reaction)
    return invalid([
      { path: ['reaction'], message: 'a reaction is sent with a device token, not a pool token' },
    ]);
  // A template is one Cloud API number's (checked against its WABA's list): never spread, nor moved
  // to a linked device of the pool, which could not send it.
  if (body.template)
    return invalid([
      { path: ['template'], message: "a template is sent with a cloud device's token, not a pool token" },
    ]);
  if (body.attachment?.base64 !== undefined && attachmentTooLarge(body.attachment.base64))
    return refused('attachment_too_large');
  const isList = Array.isArray(body.to);
  const entries = isList ? (body.to as SendTo[]) : [body.to as SendTo];
  const recipients = entries.map(phoneOf);
  const groups = recipients.flatMap((to, i) =>
    isGroupJid(to) || isUsernameAddress(to)
      ? [
          {
            path: isList ? ['to', i] : ['to'],
            message: isGroupJid(to)
              ? 'a group belongs to one device: send to it with a device token'
              : USERNAME_ERRORS.throughPool,
          },
        ]
      : [],
  );
  if (groups.length > 0) return invalid(groups);
  // A media object belongs to one device; a pool spreads a batch over several.
  if (body.attachment?.mediaId !== undefined) return refused('media_through_pool');
  const shared = contentOf(body);
  if (isRefusal(shared)) return shared;
  const personal = personalisation(entries, shared.content);
  if (isRefusal(personal)) return personal;
  const members = await poolMembers(deps.redis, poolId);
  if (!members) return refused('no_device');
  const devices = await poolDevices(deps.redis, members, deps.config.sendPolicy);
  const owners = await assign(deps, poolId, devices, recipients);
  if (!owners) return refused('no_device');
  const sendAt = dueAt(body.sendAt);
  const batchId = isList ? newMessageId() : undefined;
  const parts = new Map<string, number[]>();
  owners.forEach((d, i) => parts.set(d, [...(parts.get(d) ?? []), i]));
  const ids: string[] = new Array<string>(recipients.length);
  const accepted: string[] = [];
  for (const [deviceId, at] of parts) {
    const outcome = await deps.acceptor.accept({
      deviceId,
      kind: 'send',
      recipients: at.map((i) => recipients[i]!),
      content: personal.content,
      ...(shared.media ? { media: shared.media } : {}),
      ...(personal.vars ? { vars: at.map((i) => personal.vars![i]!) } : {}),
      ...(sendAt !== undefined ? { sendAt } : {}),
      ...(batchId ? { batchId, poolId } : {}),
      priority: PRIORITY.send,
    });
    if (isRefusal(outcome)) {
      // All or nothing: the parts accepted before are cancelled (none of them is ever sent).
      if (batchId)
        for (const d of accepted)
          await controlDeviceBatch(deps, d, batchId, 'cancel', deps.logger).catch(() => undefined);
      return outcome;
    }
    accepted.push(deviceId);
    outcome.jobs.forEach((j, k) => (ids[at[k]!] = j.messageId));
  }
  if (!batchId) {
    await deps.poolBatches.remember(poolId, owners[0]!, ids[0]!, recipients[0]!);
    return { kind: 'accepted', messageId: ids[0]! };
  }
  await deps.poolBatches.record(poolId, batchId, {
    createdAt: new Date(),
    ...(sendAt !== undefined ? { sendAt } : {}),
    shares: new Map([...parts].map(([d, at]) => [d, at.map((i) => ids[i]!)])),
    sticky: new Map(recipients.map((r, i) => [r, owners[i]!])),
  });
  return { kind: 'list_accepted', batchId, messageIds: ids };
}
