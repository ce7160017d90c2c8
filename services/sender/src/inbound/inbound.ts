import { inSpan, messageTrace, SpanKind, tracer, tracingOn } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import type { InboundMessage } from '@mgw/messenger';
import type { ContactIdentities, InboundStore } from '@mgw/store';

/**
 * Records what contacts wrote (each once, however often WhatsApp delivers it); answers the
 * messages recorded now (not seen before) with their ids, for what must happen once per message
 * (opt-outs, marking read).
 */
export async function recordInbound(
  store: InboundStore,
  deviceId: string,
  received: InboundMessage[],
  metrics: Metrics,
  identities?: ContactIdentities,
): Promise<(InboundMessage & { messageId: string })[]> {
  const recorded: (InboundMessage & { messageId: string })[] = [];
  if (identities) await completeContacts(identities, deviceId, received);
  for (const msg of received) {
    const messageId = await traceReceived(deviceId, msg, (traceparent) =>
      store.record(deviceId, traceparent ? { ...msg, traceparent } : msg),
    );
    if (!messageId) continue;
    metrics.messages.inc({ status: 'received' });
    recorded.push({ ...msg, messageId });
  }
  return recorded;
}

/**
 * Fills in what each writer's identity the message did not tell (a LID chat without `sender_pn`
 * whose number the device learnt elsewhere, e.g. from a usync answer; the username the device
 * resolved or met for the LID, when the message named none) from the device's phone <-> LID map,
 * in one round trip.
 */
async function completeContacts(
  identities: ContactIdentities,
  deviceId: string,
  received: InboundMessage[],
): Promise<void> {
  const partial = received.filter((m) => !m.contact.phone || !m.contact.lid || !m.contact.username);
  if (partial.length === 0) return;
  const known = await identities.resolveMany(
    deviceId,
    partial.map((m) => m.contact.lid ?? m.contact.phone ?? ''),
  );
  partial.forEach((m, i) => {
    m.contact = { ...known[i], ...m.contact };
    if (m.contact.phone) m.from ??= m.contact.phone;
  });
}

const sender = tracer('sender');

/**
 * An inbound message starts a trace of its own at the socket (`message.receive`, tracing on): its
 * record keeps the traceparent, so its event's delivery (webhook, brokers) continues it.
 */
function traceReceived<T>(
  deviceId: string,
  msg: InboundMessage,
  record: (tp?: string) => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return record();
  return inSpan(
    sender,
    'message.receive',
    { kind: SpanKind.CONSUMER, attributes: { 'mgw.device': deviceId, 'mgw.group': Boolean(msg.chat) } },
    () => record(messageTrace()),
  );
}
