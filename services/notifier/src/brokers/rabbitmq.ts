import amqp from 'amqplib';
import { serializeError, type Logger } from '@mgw/common';
import { backoffMs, redactUrl, type BrokerMessage, type BrokerTransport } from './transport.js';

export interface RabbitMqOptions {
  url: string;
  /** The durable topic exchange events are published to (EVENTS_RABBITMQ_EXCHANGE). */
  exchange: string;
  /** Longest wait between two connection attempts. */
  reconnectMaxMs: number;
  logger: Logger;
  /** 1 while connected. */
  onState?: (connected: boolean) => void;
}

/**
 * RabbitMQ (AMQP 0-9-1, amqplib): one connection and one confirm channel per notifier; a durable
 * topic exchange (declared at each connection); each event a persistent message with routing key
 * `<deviceId>.<type>` (a device id has no dot, so the first word is always the device and the
 * rest the event type, e.g. `shop-1.message.delivered`: bind `shop-1.#`, `*.message.*`, …),
 * `messageId` = the event id, content-type JSON, the webhook's body. A publish is done once the
 * broker confirmed it (publisher confirms: it is then routed to every bound queue, and written
 * to disk for durable queues).
 */
export class RabbitMqTransport implements BrokerTransport {
  readonly name = 'rabbitmq' as const;
  private conn?: amqp.ChannelModel;
  private channel?: amqp.ConfirmChannel;
  private closed = false;
  private attempt = 0;
  private timer?: NodeJS.Timeout;
  private onConnected: () => void = () => {};

  constructor(private readonly opts: RabbitMqOptions) {}

  get connected(): boolean {
    return this.channel !== undefined;
  }

  start(onConnected: () => void): void {
    this.onConnected = onConnected;
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const { url, exchange, logger } = this.opts;
    let conn: amqp.ChannelModel | undefined;
    try {
      conn = await amqp.connect(url, { timeout: 5000 });
      conn.on('error', () => {}); // 'close' follows; amqplib would throw an unhandled 'error'
      const channel = await conn.createConfirmChannel();
      channel.on('error', () => {});
      await channel.assertExchange(exchange, 'topic', { durable: true });
      if (this.closed) {
        await conn.close().catch(() => {});
        return;
      }
      const opened = conn;
      conn.on('close', () => this.lost(opened, 'connection closed'));
      channel.on('close', () => this.lost(opened, 'channel closed'));
      this.conn = conn;
      this.channel = channel;
      this.attempt = 0;
      this.opts.onState?.(true);
      logger.info('rabbitmq connected', { url: redactUrl(url), exchange });
      this.onConnected();
    } catch (err) {
      await conn?.close().catch(() => {});
      const waitMs = backoffMs(this.attempt++, this.opts.reconnectMaxMs);
      if (this.attempt === 1 || this.attempt % 20 === 0)
        logger.warn('rabbitmq unreachable; retrying', {
          url: redactUrl(url),
          attempt: this.attempt,
          waitMs,
          err: serializeError(err),
        });
      this.timer = setTimeout(() => void this.connect(), waitMs);
    }
  }

  /** The connection (or its channel) went: publishing stops and a new connection is made. */
  private lost(conn: amqp.ChannelModel, why: string): void {
    if (this.conn !== conn) return;
    this.conn = undefined;
    this.channel = undefined;
    this.opts.onState?.(false);
    void conn.close().catch(() => {});
    if (this.closed) return;
    this.opts.logger.warn('rabbitmq connection lost; reconnecting', { reason: why });
    this.timer = setTimeout(() => void this.connect(), backoffMs(0, this.opts.reconnectMaxMs));
  }

  publish(messages: readonly BrokerMessage[]): Promise<void> {
    const channel = this.channel;
    if (!channel) return Promise.reject(new Error('rabbitmq is not connected'));
    const { exchange } = this.opts;
    return new Promise<void>((resolve, reject) => {
      let left = messages.length;
      let failed = false;
      if (left === 0) return resolve();
      for (const m of messages) {
        channel.publish(
          exchange,
          `${m.deviceId}.${m.type}`,
          m.body,
          {
            persistent: true,
            messageId: m.id,
            contentType: 'application/json',
            type: m.type,
            timestamp: Math.floor(Date.parse(m.timestamp) / 1000) || undefined,
            appId: 'mgw',
            headers: { 'mgw-device-id': m.deviceId },
          },
          (err: unknown) => {
            if (failed) return;
            if (err) {
              failed = true;
              return reject(err instanceof Error ? err : new Error(`rabbitmq refused: ${String(err)}`));
            }
            if (--left === 0) resolve();
          },
        );
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const conn = this.conn;
    this.conn = undefined;
    this.channel = undefined;
    await conn?.close().catch(() => {});
  }
}
