import { downloadMediaMessage, type WAMessage } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '@mgw/messenger-sim';

type Dispatcher = NonNullable<RequestInit['dispatcher']>;
type DispatcherClass = new (options: { connect: { ca: string } }) => Dispatcher;

/**
 * Baileys downloads media with the global `fetch`, which only takes an undici dispatcher (an
 * https.Agent is ignored). A gateway would depend on `undici` and pass
 * `new Agent({ connect: { ca: info.mediaCaPem } })`; this package does not depend on it, so the
 * test borrows the Agent class of the undici that Node bundles (it exists once fetch was used).
 */
export async function mediaDispatcher(sim: SimulatorHandle): Promise<Dispatcher> {
  await fetch(`${sim.controlUrl}/health`);
  const global = (globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')];
  if (!global) throw new Error('Node did not expose its fetch dispatcher');
  const Agent = (global as { constructor: DispatcherClass }).constructor;
  return new Agent({ connect: { ca: sim.info.mediaCaPem } });
}

/** What a gateway does with an inbound attachment: fetch it from the media host and decrypt it. */
export function download(message: WAMessage, dispatcher: Dispatcher): Promise<Buffer> {
  return downloadMediaMessage(message, 'buffer', { options: { dispatcher } });
}
