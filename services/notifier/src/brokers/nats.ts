import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
} from '@nats-io/jetstream';
import { serializeError, type Logger } from '@mgw/common';
import { redactUrl, type BrokerMessage, type BrokerTransport } from './transport.js';

export interface NatsOptions {
  url: string;
  /** The JetStream stream the events go to, created when missing (EVENTS_NATS_STREAM). */
  stream: string;
  /** Subjects are `<prefix>.<deviceId>.<type>` (EVENTS_NATS_SUBJECT_PREFIX); the stream takes `<prefix>.>`. */
  subjectPrefix: string;
  /** JetStream's duplicate window for a stream this creates (EVENTS_NATS_DUPLICATE_WINDOW_MS). */
  duplicateWindowMs: number;
  /** Longest wait between two connection attempts. */
  reconnectMaxMs: number;
  /** How long a publish waits for its PubAck. */
  ackTimeoutMs: number;
  logger: Logger;
  onState?: (connected: boolean) => void;
}

/**
 * NATS JetStream (the maintained v3 client: `@nats-io/transport-node` + `@nats-io/jetstream`; the
 * `nats` package is its v2 line, superseded): each event published on
 * `<prefix>.<deviceId>.<type>` (a device id has no dot) with `msgID` = the event id, so JetStream
 * drops a copy published again within the stream's duplicate window (a batch resent after a lost
 * connection); done once its PubAck came (stored in the stream). The stream is created, when it
 * does not exist, at each connection (file storage, `<prefix>.>`, the duplicate window set); an
 * existing one is left as the operator configured it.
 */
export class NatsTransport implements BrokerTransport {
  readonly name = 'nats' as const;
  private nc?: NatsConnection;
  private js?: JetStreamClient;
  private ready = false;
  private closed = false;

  constructor(private readonly opts: NatsOptions) {}

  get connected(): boolean {
    return this.ready;
  }

  start(onConnected: () => void): void {
    void this.run(onConnected);
  }

  private async run(onConnected: () => void): Promise<void> {
    const { url, logger } = this.opts;
    try {
      const nc = await connect({
        servers: url,
        name: 'mgw-notifier',
        waitOnFirstConnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: Math.min(500, this.opts.reconnectMaxMs),
        reconnectJitter: 100,
        timeout: 5000,
      });
      if (this.closed) return void (await nc.close());
      this.nc = nc;
      this.js = jetstream(nc, { timeout: this.opts.ackTimeoutMs });
      await this.prepare(onConnected);
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') {
          this.setReady(false);
          logger.warn('nats connection lost; reconnecting');
        } else if (s.type === 'reconnect') {
          await this.prepare(onConnected);
        }
      }
    } catch (err) {
      if (!this.closed)
        logger.error('nats connection ended', { url: redactUrl(url), err: serializeError(err) });
    } finally {
      this.setReady(false);
    }
  }

  /** The stream exists (created if missing), then publishing may go. */
  private async prepare(onConnected: () => void): Promise<void> {
    const { stream, subjectPrefix, duplicateWindowMs, url, logger } = this.opts;
    for (let attempt = 0; !this.closed && this.nc && !this.nc.isClosed(); attempt++) {
      try {
        const jsm = await jetstreamManager(this.nc, { timeout: 5000 });
        try {
          await jsm.streams.info(stream);
        } catch (err) {
          if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
          await jsm.streams.add({
            name: stream,
            subjects: [`${subjectPrefix}.>`],
            duplicate_window: nanos(duplicateWindowMs),
          });
          logger.info('nats stream created', { stream, subjects: `${subjectPrefix}.>` });
        }
        this.setReady(true);
        logger.info('nats connected', { url: redactUrl(url), stream });
        onConnected();
        return;
      } catch (err) {
        logger.warn('nats stream not ready; retrying', { stream, attempt, err: serializeError(err) });
        await new Promise((r) => setTimeout(r, Math.min(this.opts.reconnectMaxMs, 250 * 2 ** attempt)));
      }
    }
  }

  private setReady(v: boolean): void {
    if (this.ready === v) return;
    this.ready = v;
    this.opts.onState?.(v);
  }

  async publish(messages: readonly BrokerMessage[]): Promise<void> {
    const js = this.js;
    if (!js || !this.ready) throw new Error('nats is not connected');
    const { subjectPrefix } = this.opts;
    // All in flight at once on the one connection (sent in order), then every PubAck awaited.
    const acks = messages.map((m) =>
      js.publish(`${subjectPrefix}.${m.deviceId}.${m.type}`, m.body, { msgID: m.id }),
    );
    const results = await Promise.allSettled(acks);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.setReady(false);
    await this.nc?.drain().catch(() => this.nc?.close());
  }
}
