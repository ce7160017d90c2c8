import type { Logger } from '@mgw/common';
import { ERRORS, type BatchRecord } from '@mgw/contracts';
import { cancelBatchMessages, controlBatch, wakePausedHolds, type BatchAction } from '@mgw/store';
import { ApiError } from '../http/api-error.js';
import type { ApiServices } from '../api-services.js';

/**
 * POST /batches/:batchId/pause | resume | cancel: changes the list's state (one script, which
 * emits the event with the change), then does what the change asks of the queue, and answers the
 * list as GET /batches/:batchId reads it afterwards.
 *
 * - pause: nothing to do here — every message of the list is held by its sender's gate, and the
 *   claim that starts a send refuses it atomically (a message already claimed may still go).
 * - resume: the messages held because the list was paused go back to the queue now.
 * - cancel: every message no attempt has started fails `cancelled` and its job goes; the claim
 *   refuses the rest of the list atomically, on any sender, so none of them is sent after this
 *   answer. A repeated cancel answers 200 and, while the list is not complete, runs that sweep
 *   again (it finishes one cut short).
 *
 * Refused: another device's or an unknown list (404), a list whose messages all left the queue
 * (409 `batchCompleted`), pause or resume of a cancelled list (409 `batchCancelled`). A repeat of
 * the state a list is in (pause a paused one, resume an active one) is a 200 that changes nothing.
 */
export async function controlList(
  s: Pick<ApiServices, 'redis' | 'messages' | 'batches' | 'acceptor'>,
  deviceId: string,
  batchId: string,
  action: BatchAction,
  log: Logger,
): Promise<BatchRecord> {
  if (batchId.length > 128) throw new ApiError(404, ERRORS.batchNotFound);
  const outcome = await controlBatch(s.redis, deviceId, batchId, action);
  if (outcome === 'missing') throw new ApiError(404, ERRORS.batchNotFound);
  if (outcome === 'completed') throw new ApiError(409, ERRORS.batchCompleted);
  if (outcome === 'cancelled') throw new ApiError(409, ERRORS.batchCancelled);
  const sweep = { redis: s.redis, queue: s.acceptor.queue(deviceId), messages: s.messages };
  if (action === 'cancel') {
    // A repeat sweeps the queue again only while some of the list's messages are not final (it
    // finishes a cancel cut short); a finished list is not scanned again however often it is asked.
    const finished = outcome === 'same' && (await s.batches.get(deviceId, batchId))?.completedAt;
    if (!finished) {
      const ended = await cancelBatchMessages(sweep, deviceId, batchId);
      log.info('list cancelled', { batchId, messagesEnded: ended, repeat: outcome === 'same' });
    }
  } else if (action === 'resume' && outcome === 'changed') {
    const woken = await wakePausedHolds(sweep, deviceId, batchId);
    log.info('list resumed', { batchId, messagesWoken: woken });
  } else if (outcome === 'changed') {
    log.info('list paused', { batchId });
  }
  const batch = await s.batches.get(deviceId, batchId);
  if (!batch) throw new ApiError(404, ERRORS.batchNotFound);
  return batch;
}
