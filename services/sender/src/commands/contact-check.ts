import { setTimeout as sleep } from 'node:timers/promises';
import { serializeError, type Logger } from '@mgw/common';
import type { CheckContactsCommand, DeviceCommandReply } from '@mgw/contracts';
import type { MessageSender } from '@mgw/messenger';

/**
 * POST /contacts/check, the holder's half: looks the numbers the cache did not know up at
 * WhatsApp, in queries of `batchSize` numbers with `pauseMs` between two queries of the device —
 * also between the queries of two checks, which run one after the other — so a check of a
 * thousand numbers never reaches WhatsApp as a burst. Every answer goes to the contact cache
 * (MessageSender.lookupMany), where the API reads it.
 */
export class ContactChecks {
  /** The checks of this device, one after the other. */
  private chain: Promise<unknown> = Promise.resolve();
  /** When the device's last query ended (ms); the next waits until `pauseMs` after it. */
  private lastQueryAt = 0;

  constructor(
    private readonly sender: Pick<MessageSender, 'lookupMany'>,
    private readonly logger: Logger,
  ) {}

  run(cmd: CheckContactsCommand): Promise<DeviceCommandReply> {
    const next = this.chain.then(() => this.lookUp(cmd));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async lookUp(cmd: CheckContactsCommand): Promise<DeviceCommandReply> {
    const phones = [...new Set(cmd.phones)];
    const size = Math.max(1, cmd.batchSize);
    try {
      for (let i = 0; i < phones.length; i += size) {
        const wait = this.lastQueryAt + cmd.pauseMs - Date.now();
        if (wait > 0) await sleep(wait);
        try {
          await this.sender.lookupMany(phones.slice(i, i + size));
        } finally {
          this.lastQueryAt = Date.now();
        }
      }
      return { ok: true };
    } catch (err) {
      // No numbers in the log: how many were asked, and what failed.
      this.logger.warn('number check: WhatsApp lookup failed', {
        numbers: phones.length,
        err: serializeError(err),
      });
      return { ok: false, error: 'lookup failed' };
    }
  }
}
