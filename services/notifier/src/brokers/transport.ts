import type { BrokerTransportName } from '@mgw/contracts';

/**
 * One message for a broker: an event of a device's log, as a webhook receives it. `body` is the
 * webhook body (`{type, timestamp, data}` JSON, data opened), `id` the event id (webhook-id).
 */
export interface BrokerMessage {
  deviceId: string;
  id: string;
  type: string;
  timestamp: string;
  body: Buffer;
}

/**
 * A broker the relay publishes to (relay.ts). The transport owns its connection: it connects in
 * the background, reconnects with backoff, and says when it is connected (the relay then wakes
 * every device with events waiting). RabbitMQ, NATS JetStream and SQS (which has no connection: it
 * says whether its last request reached the queue) implement it; Kafka would be one more
 * (docs/events.md, "Kafka").
 */
export interface BrokerTransport {
  readonly name: BrokerTransportName;
  /** True while a connection is up and ready to publish. */
  readonly connected: boolean;
  /**
   * While not connected, why (the last failed attempt's error, scrubbed as the logs scrub it):
   * the relay records it as the last error of the devices whose events wait (the dashboard's
   * Events tab). SQS says it; a transport without it records nothing while down.
   */
  readonly problem?: string;
  /** Starts connecting (in the background, retried until `close`); `onConnected` runs on each (re)connection. */
  start(onConnected: () => void): void;
  /**
   * Publishes the messages in order, all in flight at once, and resolves when the broker has
   * confirmed every one of them (RabbitMQ publisher confirms, JetStream PubAcks, SQS's answer to
   * every entry of its SendMessageBatch calls); rejects when
   * one was refused or the connection was lost (some may have been stored: the relay publishes
   * them again, the same ids).
   */
  publish(messages: readonly BrokerMessage[]): Promise<void>;
  close(): Promise<void>;
}

/** An address with its credentials hidden, for logs: `amqp://user:***@host:5672/vhost`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** Waits between connection attempts: 250 ms doubling to `maxMs`. */
export function backoffMs(attempt: number, maxMs: number): number {
  return Math.min(maxMs, 250 * 2 ** Math.min(attempt, 10));
}
