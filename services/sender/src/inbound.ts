import type { Metrics } from '@mgw/contracts';
import type { InboundMessage } from '@mgw/messenger';
import type { InboundStore } from '@mgw/store';

/** Records what contacts wrote (each once, however often WhatsApp delivers it). */
export async function recordInbound(
  store: InboundStore,
  deviceId: string,
  received: InboundMessage[],
  metrics: Metrics,
): Promise<void> {
  for (const msg of received) {
    if (await store.record(deviceId, msg)) metrics.messages.inc({ status: 'received' });
  }
}
