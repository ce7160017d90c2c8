import { serializeError, type Logger } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import type { RetryHooks } from '@mgw/messenger';
import type { MessageRetries } from '@mgw/store';

/**
 * Retry receipts of the device's messages (a recipient's phone could not decrypt its copy): each
 * ask counted in the message's record and answered with a re-send within MESSAGE_RETRY_MAX; the
 * ask that reaches the bound, while no receipt said the message arrived, marks it undecryptable
 * (`message.undecryptable`, in the same script). The counts live in Redis, so they hold across a
 * sender restart (the re-send reads the stored proto: @mgw/messenger's MessageProtoStore).
 */
export function retryHooks(
  deviceId: string,
  retries: MessageRetries,
  max: number,
  metrics: Metrics,
  log: Logger,
): RetryHooks {
  const warn = (what: string) => (err: unknown) => log.warn(what, { err: serializeError(err) });
  return {
    max,
    ask: async (ask) => {
      const outcome = await retries.ask(deviceId, ask.platformMessageId, ask.at);
      if (outcome.undecryptable) {
        metrics.messagesUndecryptable.inc({ device: deviceId });
        log.warn('message undecryptable: its recipient asked for it again up to the bound', {
          platformMessageId: ask.platformMessageId,
          asked: outcome.asked,
        });
      }
      if (!outcome.answer) metrics.messageRetries.inc({ outcome: 'refused' });
      log.info('retry receipt', {
        platformMessageId: ask.platformMessageId,
        count: ask.count,
        withKeys: ask.withKeys,
        answer: outcome.answer,
        known: outcome.known,
      });
      return outcome.answer;
    },
    answered: (platformMessageId) => {
      metrics.messageRetries.inc({ outcome: 'resent' });
      void retries.answered(deviceId, platformMessageId).catch(warn('retry answer not recorded'));
    },
    unavailable: () => metrics.messageRetries.inc({ outcome: 'unavailable' }),
  };
}
