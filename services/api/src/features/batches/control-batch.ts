import type { Logger } from '@mgw/common';
import type { BatchRecord } from '@mgw/contracts';
import { cancelBatchMessages, controlBatch, wakePausedHolds, type BatchAction } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';

/** What a batch control came to: the batch as it reads afterwards, or why it was refused (nothing changed). */
export type DeviceBatchControlOutcome =
  { kind: 'done'; batch: BatchRecord } | { kind: 'refused'; reason: 'not_found' | 'completed' | 'cancelled' };

/**
 * POST /batches/:batchId/pause | resume | cancel: changes the batch's state (one script, which
 * emits the event with the change), then does what the change asks of the queue, and answers the
 * batch as GET /batches/:batchId reads it afterwards.
 *
 * - pause: nothing to do here — every message of the batch is held by its sender's gate, and the
 *   claim that starts a send refuses it atomically (a message already claimed may still go).
 * - resume: the messages held because the batch was paused go back to the queue now.
 * - cancel: every message no attempt has started fails `cancelled` and its job goes; the claim
 *   refuses the rest of the batch atomically, on any sender, so none of them is sent after this
 *   answer. A repeated cancel is done again and, while the batch is not complete, runs that sweep
 *   again (it finishes one cut short).
 *
 * Refused: another device's or an unknown batch (`not_found`), a batch whose messages all left the
 * queue (`completed`), pause or resume of a cancelled batch (`cancelled`). A repeat of the state a
 * batch is in (pause a paused one, resume an active one) is done and changes nothing.
 */
export async function controlDeviceBatch(
  s: Pick<ApiServices, 'redis' | 'messages' | 'batches' | 'acceptor'>,
  deviceId: string,
  batchId: string,
  action: BatchAction,
  log: Logger,
): Promise<DeviceBatchControlOutcome> {
  const notFound = { kind: 'refused', reason: 'not_found' } as const;
  if (batchId.length > 128) return notFound;
  const outcome = await controlBatch(s.redis, deviceId, batchId, action);
  if (outcome === 'missing') return notFound;
  if (outcome === 'completed' || outcome === 'cancelled') return { kind: 'refused', reason: outcome };
  const sweep = { redis: s.redis, queue: s.acceptor.queue(deviceId), messages: s.messages };
  if (action === 'cancel') {
    // A repeat sweeps the queue again only while some of the batch's messages are not final (it
    // finishes a cancel cut short); a finished batch is not scanned again however often it is asked.
    const finished = outcome === 'same' && (await s.batches.get(deviceId, batchId))?.completedAt;
    if (!finished) {
      const ended = await cancelBatchMessages(sweep, deviceId, batchId);
      log.info('batch cancelled', { batchId, messagesEnded: ended, repeat: outcome === 'same' });
    }
  } else if (action === 'resume' && outcome === 'changed') {
    const woken = await wakePausedHolds(sweep, deviceId, batchId);
    log.info('batch resumed', { batchId, messagesWoken: woken });
  } else if (outcome === 'changed') {
    log.info('batch paused', { batchId });
  }
  const batch = await s.batches.get(deviceId, batchId);
  return batch ? { kind: 'done', batch } : notFound;
}
