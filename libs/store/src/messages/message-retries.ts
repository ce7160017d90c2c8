import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/** Counts retry receipts and their answers, and marks a message undecryptable (`lua/message-retry-5.lua`). */
const RETRY = storeScript<[number, number, number]>('message-retry-5');

/** What the gateway does with a recipient's retry receipt (see MessageRetries.ask). */
export interface RetryAskOutcome {
  /** The WhatsApp id names one of the device's message records. */
  known: boolean;
  /** Re-send the message (within the bound, not deleted for everyone). */
  answer: boolean;
  /** This ask reached the bound: the message was marked undecryptable and `message.undecryptable` emitted. */
  undecryptable: boolean;
  /** Asks counted for the message so far. */
  asked: number;
}

/**
 * A message's retry receipts (its recipient's phone could not decrypt it and asks for it again)
 * as its record shows them: `retries: { asked, answered, lastAt, undecryptableAt? }` (see
 * publicRecord). The bound (MESSAGE_RETRY_MAX) caps the answers; the ask that reaches it marks a
 * message still `sent` undecryptable, once, with its event.
 */
export class MessageRetries {
  constructor(
    private readonly redis: RedisClient,
    private readonly max: number,
  ) {}

  /** Counts a retry receipt for the device's message `platformMessageId`; says whether to answer it. */
  async ask(deviceId: string, platformMessageId: string, at = new Date()): Promise<RetryAskOutcome> {
    const [answer, marked, asked] = await this.run('ask', deviceId, platformMessageId, at);
    if (answer === -2) return { known: false, answer: true, undecryptable: false, asked: 0 };
    return { known: true, answer: answer === 1, undecryptable: marked === 1, asked };
  }

  /** Counts a re-send of the message (the answer to a retry receipt); false for an id not ours. */
  async answered(deviceId: string, platformMessageId: string, at = new Date()): Promise<boolean> {
    const [known] = await this.run('answer', deviceId, platformMessageId, at);
    return known !== -2;
  }

  private run(
    action: 'ask' | 'answer',
    deviceId: string,
    platformMessageId: string,
    at: Date,
  ): Promise<[number, number, number]> {
    return RETRY.run(
      this.redis,
      [
        keys.messageByPlatformId(deviceId, platformMessageId),
        keys.webhook(deviceId),
        keys.eventOutbox(deviceId),
        keys.contactIdentities(deviceId),
        keys.eventLog(deviceId),
      ],
      [
        action,
        at.toISOString(),
        String(this.max),
        keys.message(deviceId, ''),
        deviceId,
        keys.eventsChannel(),
      ],
    );
  }
}
