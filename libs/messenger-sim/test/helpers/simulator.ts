import { startSimulator, type SimulatorHandle } from '../../src/index.js';
import { TestDevice } from './baileys-client.js';

/** Links a fresh gateway device to `phone` by QR and waits until its socket is open. */
export async function linkByQr(
  sim: SimulatorHandle,
  phone: string,
  name = 'Test Account',
): Promise<TestDevice> {
  const device = new TestDevice(sim.info);
  device.connect();
  const qr = await device.nextQr();
  const opened = device.waitForOpen(20_000);
  await sim.linkWithQr({ qr, phone, name });
  await opened;
  return device;
}

export async function startTestSimulator(): Promise<SimulatorHandle> {
  return startSimulator({ port: 0, receiptDelayMs: 300, readDelayMs: 600 });
}
