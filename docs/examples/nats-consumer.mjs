// A consumer of the gateway's events in NATS JetStream (docs/events.md): a durable consumer on the
// gateway's stream reads the delivery receipts of every device, prints each one as a line of JSON
// and acknowledges it; it exits after the first (or with code 1 when none came within 30 s).
// Node 20+, with @nats-io/transport-node and @nats-io/jetstream (v3), the clients the notifier uses.
//
//   NATS_URL  the server (nats://127.0.0.1:4222)
//   STREAM    the gateway's stream (EVENTS_NATS_STREAM: MGW_EVENTS)
//   SUBJECT   what to read (EVENTS_NATS_SUBJECT_PREFIX, a device, an event type: mgw.events.*.message.delivered)
import { connect } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';

const stream = process.env.STREAM ?? 'MGW_EVENTS';
const subject = process.env.SUBJECT ?? 'mgw.events.*.message.delivered';
const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
// One filter subject: a list of them (`filter_subjects`) needs nats-server 2.10 or later.
await (
  await jetstreamManager(nc)
).consumers.add(stream, {
  durable_name: 'crm-receipts',
  filter_subject: subject,
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.All,
});
const consumer = await jetstream(nc).consumers.get(stream, 'crm-receipts');
const messages = await consumer.consume();
const giveUp = setTimeout(() => messages.stop(), 30_000);
let read = 0;
for await (const m of messages) {
  // The event id (the webhook's webhook-id) is the message id: JetStream drops a copy within its
  // duplicate window; a consumer that may see one later deduplicates on it.
  const event = m.json();
  process.stdout.write(
    `${JSON.stringify({ id: m.headers?.get('Nats-Msg-Id'), type: event.type, data: event.data })}\n`,
  );
  m.ack();
  read += 1;
  break;
}
clearTimeout(giveUp);
await nc.drain();
process.exit(read > 0 ? 0 : 1);
