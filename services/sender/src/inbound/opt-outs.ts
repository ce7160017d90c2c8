import { serializeError, type Logger } from '@mgw/common';
import type { InboundMessage } from '@mgw/messenger';
import {
  confirmationText,
  enqueueDeviceText,
  matchKeyword,
  optIn,
  optOut,
  readOptOutSettings,
  type DeviceTextDeps,
  type KeywordMatch,
} from '@mgw/store';

export interface OptOutDeps extends DeviceTextDeps {
  logger: Logger;
}

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

  /** Enqueues the confirmation as one message of the device (see enqueueDeviceText). */
  private async confirm(phone: string, text: string, match: KeywordMatch): Promise<void> {
    const messageId = await enqueueDeviceText(this.deps, phone, text, { optOutNotice: true });
    this.deps.logger.info('opt-out confirmation enqueued', {
      messageId,
      direction: match.direction,
      language: match.language,
    });
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
