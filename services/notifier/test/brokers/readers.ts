import amqp from 'amqplib';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

/** One message a broker delivered: where it was routed, its id, its body. */
export interface Received {
  /** RabbitMQ routing key or NATS subject. */
  key: string;
  id: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  contentType?: string;
  persistent?: boolean;
}

/**
 * A RabbitMQ consumer of the relay's exchange: a durable queue bound with `pattern` (`#`: all),
 * acking each message; it reconnects (every 200 ms) while its broker is down, so it reads what
 * the durable queue kept across a broker crash.
 */
export class RabbitReader {
  readonly received: Received[] = [];
  private conn?: amqp.ChannelModel;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly exchange: string,
    private readonly queue: string,
    private readonly pattern = '#',
  ) {}

  async start(): Promise<void> {
    const conn = await amqp.connect(this.url);
    this.conn = conn;
    conn.on('error', () => {});
    conn.on('close', () => {
      if (!this.closed) setTimeout(() => void this.reconnect(), 200);
    });
    const ch = await conn.createChannel();
    ch.on('error', () => {});
    await ch.assertExchange(this.exchange, 'topic', { durable: true });
    await ch.assertQueue(this.queue, { durable: true });
    await ch.bindQueue(this.queue, this.exchange, this.pattern);
    await ch.prefetch(1000);
    await ch.consume(this.queue, (m) => {
      if (!m) return;
      this.received.push({
        key: m.fields.routingKey,
        id: String(m.properties.messageId),
        body: JSON.parse(m.content.toString()) as Received['body'],
        contentType: m.properties.contentType as string,
        persistent: m.properties.deliveryMode === 2,
      });
      ch.ack(m);
    });
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    try {
      await this.start();
    } catch {
      setTimeout(() => void this.reconnect(), 200);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.conn?.close().catch(() => {});
  }
}

/** Every message the JetStream stream holds, in stream order (one direct read per message). */
export async function readNatsStream(url: string, stream: string): Promise<Received[]> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream).catch(() => undefined);
    if (!info) return [];
    const out: Received[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      if (!m) continue;
      out.push({
        key: m.subject,
        id: m.header.get('Nats-Msg-Id'),
        body: JSON.parse(new TextDecoder().decode(m.data)) as Received['body'],
      });
    }
    return out;
  } finally {
    await nc.close();
  }
}

/**
 * Checks one device's messages: every `seq` 1..n arrived at least once, and their first copies
 * came in order. Returns the copies beyond the first (redeliveries) for the caller to print.
 */
export function orderAndCompleteness(
  received: Received[],
  deviceId: string,
  n: number,
): { duplicates: number; problems: string[] } {
  const seen = new Set<number>();
  const firsts: number[] = [];
  let duplicates = 0;
  for (const r of received) {
    if (r.body.data.deviceId !== deviceId) continue;
    const seq = Number(r.body.data.seq);
    if (seen.has(seq)) duplicates++;
    else {
      seen.add(seq);
      firsts.push(seq);
    }
  }
  const problems: string[] = [];
  for (let i = 1; i < firsts.length; i++)
    if (firsts[i]! < firsts[i - 1]!) problems.push(`${deviceId}: seq ${firsts[i]} after ${firsts[i - 1]}`);
  const missing: number[] = [];
  for (let s = 1; s <= n; s++) if (!seen.has(s)) missing.push(s);
  if (missing.length)
    problems.push(`${deviceId}: ${missing.length} missing (first ${missing.slice(0, 5).join(', ')})`);
  return { duplicates, problems: problems.slice(0, 10) };
}
