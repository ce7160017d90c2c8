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

/** A call of the simulator's control API: its status and JSON body (the sim tests' helper). */
export function simControl(
  sim: Pick<SimulatorHandle, 'controlUrl'>,
): (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: Record<string, unknown> }> {
  return async (method, path, body) => {
    const res = await fetch(`${sim.controlUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}
