import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { newMessageId, newPlatformMessageId, PRIORITY, type Metrics, type SendJobData } from '@mgw/contracts';
import type { InboundMessage } from '@mgw/messenger';
import {
  addJobTo,
  confirmationText,
  jobTransaction,
  matchKeyword,
  optIn,
  optOut,
  readOptOutSettings,
  stageQueued,
  type ContentStore,
  type KeywordMatch,
  type MessageIndex,
  type SendQueue,
} from '@mgw/store';

export interface OptOutDeps {
  redis: RedisClient;
  deviceId: string;
  contents: ContentStore;
  index: MessageIndex;
  queue: SendQueue;
  /** The device's link generation (a confirmation is a message of the current link). */
  linkGeneration: () => number;
  metrics: Metrics;
  logger: Logger;
  /** How long a failed confirmation job is kept (the message retention). */
  failedRetentionSeconds: number;
}

/** A confirmation's attempts: as a message of the API, retried a few times before it fails. */
const CONFIRMATION_ATTEMPTS = 5;
const CONFIRMATION_BACKOFF_MS = 2000;

/**
 * Keywords contacts write: a whole message that is one of the device's opt-out keywords puts the
 * number on its suppression list, an opt-in keyword takes it off, and the contact gets one
 * confirmation when the list changed (not on a repeat) and the device's confirmation is on.
 *
 * The confirmation is a message like those of /send, not a direct socket write: a job on the
 * device's queue, recorded, indexed and counted, so it is sent once (a retry re-sends the same
 * WhatsApp id), paced with the device's other messages and within its caps and quiet hours. It is
 * marked `optOutNotice`, so the suppression that it confirms does not stop it.
 * Called once per inbound message (the inbound store dedupes WhatsApp's redeliveries).
 */
export class OptOutKeywords {
  constructor(private readonly deps: OptOutDeps) {}

  async onInbound(msg: InboundMessage): Promise<void> {
    // A keyword written in a group is said to the group, not to us.
    if (msg.text === undefined || msg.chat) return;
    const { redis, deviceId, metrics } = this.deps;
    const { settings } = await readOptOutSettings(redis, deviceId);
    const match = matchKeyword(settings, msg.text);
    // A contact known only by its LID is suppressed by its LID (the address a send to it uses).
    const address = msg.from ?? msg.contact.lid;
    if (!match || !address) return;
    const changed =
      match.direction === 'out'
        ? await optOut(redis, deviceId, address, 'keyword')
        : await optIn(redis, deviceId, address, 'keyword');
    if (!changed) return;
    metrics.optOutChanges.inc({
      direction: match.direction === 'out' ? 'opted_out' : 'opted_in',
      source: 'keyword',
    });
    if (settings.confirmation) await this.confirm(address, confirmationText(settings, match), match);
  }

  /** Enqueues the confirmation as one message of the device, in one transaction with its content. */
  private async confirm(phone: string, text: string, match: KeywordMatch): Promise<void> {
    const { redis, deviceId, contents, index, queue } = this.deps;
    const data: SendJobData = {
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: phone,
      contentId: newMessageId(),
      linkGeneration: this.deps.linkGeneration(),
      enqueuedAt: Date.now(),
      optOutNotice: true,
    };
    const tx = await jobTransaction(redis, queue);
    contents.stage(tx, deviceId, data.contentId, { text }, 1);
    await addJobTo(tx, queue, data, this.jobOptions(data.messageId));
    stageQueued(tx, deviceId, 1, Buffer.byteLength(text));
    index.stage(tx, deviceId, [data.messageId]);
    const replies = (await tx.exec()) ?? [];
    const failed = replies.find(([err]) => err)?.[0];
    if (failed) throw failed;
    this.deps.metrics.jobsEnqueued.inc({ queue_type: 'send', kind: data.kind });
    this.deps.logger.info('opt-out confirmation enqueued', {
      messageId: data.messageId,
      direction: match.direction,
      language: match.language,
    });
  }

  private jobOptions(messageId: string) {
    return {
      jobId: messageId,
      priority: PRIORITY.send,
      attempts: CONFIRMATION_ATTEMPTS,
      backoff: { type: 'exponential', delay: CONFIRMATION_BACKOFF_MS },
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: this.deps.failedRetentionSeconds },
    };
  }
}

/** Runs the keyword check of each message; a failure is logged (the message stays recorded). */
export async function checkKeywords(
  keywords: OptOutKeywords,
  received: InboundMessage[],
  logger: Logger,
): Promise<void> {
  for (const msg of received) {
    await keywords
      .onInbound(msg)
      .catch((err: unknown) => logger.warn('opt-out keyword not applied', { err: serializeError(err) }));
  }
}
