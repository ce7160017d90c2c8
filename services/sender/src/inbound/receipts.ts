import { contextOf, recordSpan, tracer, tracingOn } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import type { ReceiptUpdate } from '@mgw/messenger';
import type { MessageStore } from '@mgw/store';

const sender = tracer('sender');

/**
 * Moves our records forward on delivery/read receipts (unknown ids — e.g. follow-up texts — are
 * skipped). Receipts of a device arriving within one turn of the event loop are applied together:
 * two round trips per batch (see MessageStore.markReceipts), not two per receipt.
 */
export class ReceiptBatcher {
  private batch: ReceiptUpdate[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly messages: MessageStore,
    private readonly deviceId: string,
    private readonly metrics: Metrics,
    private readonly onError: (err: unknown) => void,
  ) {}

  add(receipts: ReceiptUpdate[]): void {
    if (receipts.length === 0) return;
    const first = this.batch.length === 0;
    this.batch.push(...receipts);
    if (first) setImmediate(() => void this.flush());
  }

  /** Applies what is pending now (and what a flush in progress holds); for tests and shutdown. */
  async flush(): Promise<void> {
    await this.flushing;
    const batch = this.batch;
    if (batch.length === 0) return;
    this.batch = [];
    const traced = tracingOn();
    this.flushing = this.messages
      .markReceipts(this.deviceId, batch, traced)
      .then((applied) => {
        for (const r of applied) {
          // A read receipt that made the message delivered as well (its delivery receipt had not
          // come, or came merged into it) counts and traces both, as its events announce both.
          const reached = r.impliedDelivery ? (['delivered', r.status] as const) : [r.status];
          for (const status of reached) {
            this.metrics.messages.inc({ status });
            // It arrives long after the send's span ended: a span of its own in the message's trace.
            if (r.traceparent)
              recordSpan(sender, `message.${status}`, {
                parent: contextOf(r.traceparent),
                startTime: r.at.getTime(),
                attributes: { 'mgw.device': this.deviceId },
              });
          }
        }
      })
      .catch(this.onError)
      .finally(() => (this.flushing = undefined));
    await this.flushing;
  }
}
