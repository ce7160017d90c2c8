import {
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SQSClient,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { serializeError, type Logger } from '@mgw/common';
import { backoffMs, redactUrl, type BrokerMessage, type BrokerTransport } from './transport.js';

export interface SqsOptions {
  /** The queue (EVENTS_SQS_QUEUE_URL); a name ending in `.fifo` is a FIFO queue. */
  queueUrl: string;
  /** The region requests are signed for (EVENTS_SQS_REGION, else the queue URL's). */
  region: string;
  /** Another SQS endpoint than the queue URL's host (EVENTS_SQS_ENDPOINT: a local or compatible server). */
  endpoint?: string;
  /**
   * Fixed credentials; absent (the service): the AWS SDK's default chain (AWS_ACCESS_KEY_ID /
   * AWS_SECRET_ACCESS_KEY, a web identity token or a container/instance role). Never logged.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Longest wait between two reachability checks while SQS is unreachable. */
  reconnectMaxMs: number;
  /** How long one SQS request may take (connect included) before it counts as failed. */
  requestTimeoutMs: number;
  /** While idle, SQS is checked this often, so the connected gauge follows it without traffic. */
  probeMs?: number;
  logger: Logger;
  onState?: (connected: boolean) => void;
}

/** SendMessageBatch: at most 10 entries per call. */
const BATCH_ENTRIES = 10;
/**
 * At most this many bytes per call (bodies and attributes of every entry): SQS's payload limit
 * as every SQS-compatible server knows it (AWS raised its own to 1 MiB in 2025; 256 KiB suits
 * both).
 */
export const SQS_BATCH_BYTES = 262_144;
/** Calls of one standard-queue publish in flight at once. */
const STANDARD_CALLS_IN_FLIGHT = 8;
/** Tries of an entry SQS failed on its side (SenderFault false) within one publish. */
const ENTRY_TRIES = 3;

/**
 * Amazon SQS (`@aws-sdk/client-sqs`, AWS's own client: SigV4, the credential chain, retries of
 * throttling): every event one message on the operator's queue, sent with SendMessageBatch
 * (10 per call, packed under SQS's 256 KiB per call), body = the webhook body, message attributes
 * `mgw-event-id`, `mgw-event-type`, `mgw-device-id`.
 *
 * - FIFO queue (`….fifo`): `MessageGroupId` = the device (SQS keeps order within a group),
 *   `MessageDeduplicationId` = the event id (SQS drops a copy sent again within its 5-minute
 *   window: a page published again after a lost call is stored once). SQS orders a group's
 *   messages as they arrive, so one device's calls go one after the other (two calls in flight
 *   could land in either order); devices go in parallel (the relay serves 16 at once).
 * - Standard queue: at least once, no group or deduplication id (SQS does neither there), and a
 *   page's calls in flight together (a standard queue keeps no order anyway).
 *
 * A publish resolves once SQS accepted every entry; an entry SQS failed on its side is sent again
 * (up to 3 tries), one it refused for itself (SenderFault) fails the publish.
 *
 * SQS has no connection: "connected" means **the queue answers** — its GetQueueAttributes
 * succeeds (when starting, every `probeMs` while idle, and after a call that failed), so the
 * relay's gauges and the MgwBrokerDown alert read the same as for RabbitMQ and NATS. A failed
 * SendMessageBatch alone does not make it down: the queue is asked again (one check at a time, at
 * most one per `reconnectMaxMs` after a failed call), and only a check that fails does (a queue
 * deleted, SQS unreachable, the access to the queue revoked: then checked again with backoff).
 * A queue that answers but refuses the sends (the role lacks `sqs:SendMessage`, or KMS denies
 * its key) stays connected, as a RabbitMQ that nacks or a JetStream without the stream: each
 * publish fails, the relay tries the device again after its retry delay and logs and records
 * the refusal (relay.ts). The connected gauge does not flip on it, and nothing logs here.
 * `problem` says why it is not connected (the failed check's error), for the operator.
 */
export class SqsTransport implements BrokerTransport {
  readonly name = 'sqs' as const;
  readonly fifo: boolean;
  private readonly client: SQSClient;
  private up = false;
  private closed = false;
  private attempt = 0;
  private probing = false;
  private lastOkMs = 0;
  /** The check after a failed call under way (one at a time), and when the last one started. */
  private rechecking = false;
  private lastRecheckMs = 0;
  private why?: string;
  private timer?: NodeJS.Timeout;
  /** Ends the probe's wait at once (close). */
  private endWait: () => void = () => {};
  private idleTimer?: NodeJS.Timeout;
  private onConnected: () => void = () => {};

  constructor(private readonly opts: SqsOptions) {
    this.fifo = new URL(opts.queueUrl).pathname.endsWith('.fifo');
    this.client = new SQSClient({
      region: opts.region,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      ...(opts.credentials ? { credentials: opts.credentials } : {}),
      // One more try of a throttled or dropped call within the publish; the relay retries the rest.
      maxAttempts: 2,
      requestHandler: {
        connectionTimeout: Math.min(3000, opts.requestTimeoutMs),
        requestTimeout: opts.requestTimeoutMs,
        throwOnRequestTimeout: true,
        httpAgent: { keepAlive: true, maxSockets: 64 },
        httpsAgent: { keepAlive: true, maxSockets: 64 },
      },
    });
  }

  get connected(): boolean {
    return this.up;
  }

  /** While not connected, the last failed check's error (as logged: scrubbed); undefined while connected. */
  get problem(): string | undefined {
    return this.up ? undefined : this.why;
  }

  start(onConnected: () => void): void {
    this.onConnected = onConnected;
    void this.probe();
    const every = this.opts.probeMs ?? 15_000;
    this.idleTimer = setInterval(() => {
      if (this.up && Date.now() - this.lastOkMs >= every) void this.check();
    }, every);
    this.idleTimer.unref();
  }

  /** Checks the queue until it answers (with backoff), then says it is connected. */
  private async probe(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    try {
      while (!this.closed) {
        try {
          await this.queueAttributes();
          if (this.closed) return;
          this.attempt = 0;
          this.setUp(true);
          this.opts.logger.info('sqs reachable', {
            queueUrl: redactUrl(this.opts.queueUrl),
            fifo: this.fifo,
          });
          this.onConnected();
          return;
        } catch (err) {
          this.why = problemOf(err);
          const waitMs = backoffMs(this.attempt++, this.opts.reconnectMaxMs);
          if (this.attempt === 1 || this.attempt % 20 === 0)
            this.opts.logger.warn('sqs unreachable; retrying', {
              queueUrl: redactUrl(this.opts.queueUrl),
              attempt: this.attempt,
              waitMs,
              err: serializeError(err),
            });
          await new Promise<void>((r) => {
            this.endWait = r;
            this.timer = setTimeout(r, waitMs);
          });
        }
      }
    } finally {
      this.probing = false;
    }
  }

  /** The idle check: a queue gone quiet and unreachable turns the gauge to 0. */
  private async check(): Promise<void> {
    try {
      await this.queueAttributes();
    } catch (err) {
      this.lost(err);
    }
  }

  private async queueAttributes(): Promise<void> {
    const out = await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: this.opts.queueUrl, AttributeNames: ['FifoQueue'] }),
    );
    const fifo = out.Attributes?.FifoQueue === 'true';
    if (fifo !== this.fifo)
      throw new Error(`the queue's FifoQueue attribute is ${fifo}, its name says ${this.fifo}`);
    this.lastOkMs = Date.now();
  }

  private setUp(v: boolean): void {
    if (this.up === v) return;
    this.up = v;
    this.opts.onState?.(v);
  }

  /**
   * A call failed other than by SQS refusing some of its entries: the queue is asked whether it
   * still answers (at once, unless a check after a failed call began less than `reconnectMaxMs`
   * ago or is under way: a queue refusing every send is not asked after each one). It is down only
   * when that check fails.
   */
  private recheck(): void {
    const now = Date.now();
    if (this.rechecking || !this.up || now - this.lastRecheckMs < this.opts.reconnectMaxMs) return;
    this.rechecking = true;
    this.lastRecheckMs = now;
    void this.queueAttributes()
      .catch((err: unknown) => this.lost(err))
      .finally(() => (this.rechecking = false));
  }

  /** A check did not reach the queue (or SQS refused it): down until a check answers again. */
  private lost(err: unknown): void {
    if (this.closed || !this.up) return;
    this.why = problemOf(err);
    this.setUp(false);
    this.opts.logger.warn('sqs unreachable; checking again', { err: serializeError(err) });
    void this.probe();
  }

  async publish(messages: readonly BrokerMessage[]): Promise<void> {
    if (!this.up) throw new Error('sqs is not reachable');
    const calls = pack(messages.map((m) => this.entry(m)));
    try {
      if (this.fifo) for (const c of calls) await this.send(c);
      else {
        let next = 0;
        let failed = false;
        // A failed call ends the publish: the others take no more calls (the page goes again).
        const worker = async () => {
          while (next < calls.length && !failed)
            await this.send(calls[next++]!).catch((err: unknown) => {
              failed = true;
              throw err;
            });
        };
        await Promise.all(Array.from({ length: Math.min(STANDARD_CALLS_IN_FLIGHT, calls.length) }, worker));
      }
    } catch (err) {
      if (!(err instanceof EntryRefused)) this.recheck();
      throw err;
    }
  }

  private entry(m: BrokerMessage): SendMessageBatchRequestEntry {
    return {
      Id: '', // set per call (unique within it)
      MessageBody: m.body.toString('utf8'),
      MessageAttributes: {
        'mgw-event-id': { DataType: 'String', StringValue: m.id },
        'mgw-event-type': { DataType: 'String', StringValue: m.type },
        'mgw-device-id': { DataType: 'String', StringValue: m.deviceId },
      },
      ...(this.fifo ? { MessageGroupId: m.deviceId, MessageDeduplicationId: m.id } : {}),
    };
  }

  /** One SendMessageBatch call, its entries SQS failed on its side sent again; resolves when all were taken. */
  private async send(entries: SendMessageBatchRequestEntry[]): Promise<void> {
    let left = entries.map((e, i) => ({ ...e, Id: String(i) }));
    for (let tryNo = 1; ; tryNo++) {
      const out = await this.client.send(
        new SendMessageBatchCommand({ QueueUrl: this.opts.queueUrl, Entries: left }),
      );
      this.lastOkMs = Date.now();
      const failed = out.Failed ?? [];
      if (!failed.length) return;
      const refused = failed.find((f) => f.SenderFault);
      if (refused || tryNo >= ENTRY_TRIES) {
        const f = refused ?? failed[0]!;
        throw new EntryRefused(
          `sqs refused ${failed.length} of ${left.length} messages: ${f.Code} ${f.Message ?? ''}`,
        );
      }
      const again = new Set(failed.map((f) => f.Id));
      left = left.filter((e) => again.has(e.Id));
      await new Promise((r) => setTimeout(r, 50 * tryNo));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.endWait();
    clearInterval(this.idleTimer);
    this.setUp(false);
    this.client.destroy();
  }
}

/** Entries SQS answered for but would not take: the queue is there, so not a lost connection. */
class EntryRefused extends Error {}

/** An error as the operator is shown it: its message, scrubbed as the logs scrub it. */
function problemOf(err: unknown): string {
  return String(serializeError(err).message ?? err);
}

/** Bytes SQS counts for an entry: its body and its attributes' names, types and values. */
function entryBytes(e: SendMessageBatchRequestEntry): number {
  let n = Buffer.byteLength(e.MessageBody ?? '');
  for (const [k, v] of Object.entries(e.MessageAttributes ?? {}))
    n += Buffer.byteLength(k) + Buffer.byteLength(v.DataType ?? '') + Buffer.byteLength(v.StringValue ?? '');
  return n;
}

/** The entries in order, cut into calls of at most 10 entries and SQS_BATCH_BYTES. */
export function pack(entries: SendMessageBatchRequestEntry[]): SendMessageBatchRequestEntry[][] {
  const calls: SendMessageBatchRequestEntry[][] = [];
  let call: SendMessageBatchRequestEntry[] = [];
  let bytes = 0;
  for (const e of entries) {
    const n = entryBytes(e);
    if (call.length && (call.length === BATCH_ENTRIES || bytes + n > SQS_BATCH_BYTES)) {
      calls.push(call);
      call = [];
      bytes = 0;
    }
    call.push(e);
    bytes += n;
  }
  if (call.length) calls.push(call);
  return calls;
}
