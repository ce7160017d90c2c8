import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import { TestDevice } from './test-device.js';

/** Links a fresh gateway device to `phone` by QR and waits until its socket is open. */
export async function linkTestDevice(
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
