import type { Metrics } from '@mgw/contracts';
import type { InboundMessage } from '@mgw/messenger';
import type { InboundStore } from '@mgw/store';

/**
 * Records what contacts wrote (each once, however often WhatsApp delivers it); answers the
 * messages recorded now (not seen before), for what must happen once per message (opt-outs).
 */
export async function recordInbound(
  store: InboundStore,
  deviceId: string,
  received: InboundMessage[],
  metrics: Metrics,
): Promise<InboundMessage[]> {
  const recorded: InboundMessage[] = [];
  for (const msg of received) {
    if (!(await store.record(deviceId, msg))) continue;
    metrics.messages.inc({ status: 'received' });
    recorded.push(msg);
  }
  return recorded;
}
