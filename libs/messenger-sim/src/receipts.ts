import type { CompanionDevice, SimUser } from './directory.js';
import type { DeliveryContext, SimulatorConfig } from './sim-context.js';
import { node, unixSeconds } from './stanza.js';

/** What a contact's receipts need of the simulator. */
export interface ReceiptsContext extends DeliveryContext {
  readonly config: SimulatorConfig;
}

/**
 * Delivery and read receipts from a recipient's phone back to the sending device, delayed as a
 * phone's are by default. A receipt that arrives while Baileys still buffers the upsert of the
 * sent message is folded into that upsert, with no `messages.update` for it (the gateway reads it
 * there too); `receiptDelayMs: 0` with a small `readDelayMs` provokes that.
 */
export function scheduleReceipts(
  sim: ReceiptsContext,
  recipient: SimUser,
  device: CompanionDevice,
  chatJid: string,
  messageId: string,
): void {
  const send = (type?: 'read') => {
    sim.deliverToDevice(
      device,
      node('receipt', { from: chatJid, id: messageId, t: unixSeconds(), ...(type ? { type } : {}) }),
    );
  };
  const { receiptDelayMs, readDelayMs } = sim.config;
  if (recipient.receipts === 'none') return;
  const read = readDelayMs !== null && recipient.receipts === 'read';
  if (receiptDelayMs === null) {
    if (read) setTimeout(() => send('read'), readDelayMs).unref();
    return;
  }
  // A phone acknowledges delivery before it reports a read: the read is timed from the delivery,
  // not alongside it (two timers can fire in either order when the event loop was busy).
  setTimeout(() => {
    send();
    if (read) setTimeout(() => send('read'), Math.max(readDelayMs - receiptDelayMs, 1)).unref();
  }, receiptDelayMs).unref();
}
