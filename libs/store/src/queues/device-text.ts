import type { RedisClient } from '@mgw/common';
import { newMessageId, newPlatformMessageId, PRIORITY, type Metrics, type SendJobData } from '@mgw/contracts';
import { addJobTo, jobTransaction } from './bullmq-door.js';
import type { SendQueue } from './send-queues.js';
import type { ContentStore } from '../messages/content-store.js';
import type { MessageIndex } from '../messages/message-index.js';
import { stageQueued } from '../devices/device-state.js';

/**
 * What the device's own texts (an opt-out confirmation, the answer to a rejected call) are queued
 * with: by the sender for a linked device, by the API's Meta webhook for a Cloud API device.
 */
export interface DeviceTextDeps {
  redis: RedisClient;
  deviceId: string;
  contents: ContentStore;
  index: MessageIndex;
  queue: SendQueue;
  /** The device's link generation (such a text is a message of the current link). */
  linkGeneration: () => number;
  metrics: Metrics;
  /** How long a failed job is kept (the message retention). */
  failedRetentionSeconds: number;
}

/** Such a text's attempts: as a message of the API, retried a few times before it fails. */
const ATTEMPTS = 5;
const BACKOFF_MS = 2000;

/**
 * Queues a text the gateway sends on the device's behalf as one message of the device, like those
 * of /send and never a direct socket write: a job on the device's queue with its content, its
 * queue count and its place in the message index, in one transaction. So it is recorded, sent
 * once (a retry re-sends the same WhatsApp id), paced with the device's other messages and held
 * by its caps, quiet hours and pauses (account protection). Answers the message's id.
 */
export async function enqueueDeviceText(
  deps: DeviceTextDeps,
  to: string,
  text: string,
  flags: Pick<SendJobData, 'optOutNotice'> = {},
): Promise<string> {
  const { redis, deviceId, contents, index, queue } = deps;
  const data: SendJobData = {
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to,
    contentId: newMessageId(),
    linkGeneration: deps.linkGeneration(),
    enqueuedAt: Date.now(),
    ...flags,
  };
  const tx = await jobTransaction(redis, queue);
  contents.stage(tx, deviceId, data.contentId, { text }, 1);
  await addJobTo(tx, queue, data, {
    jobId: data.messageId,
    priority: PRIORITY.send,
    attempts: ATTEMPTS,
    backoff: { type: 'exponential', delay: BACKOFF_MS },
    removeOnComplete: { age: 3600 },
    removeOnFail: { age: deps.failedRetentionSeconds },
  });
  stageQueued(tx, deviceId, 1, Buffer.byteLength(text));
  index.stage(tx, deviceId, [data.messageId]);
  const replies = (await tx.exec()) ?? [];
  const failed = replies.find(([err]) => err)?.[0];
  if (failed) throw failed;
  deps.metrics.jobsEnqueued.inc({ queue_type: 'send', kind: data.kind });
  return data.messageId;
}
