/**
 * The fleet bench's baseline, in a process of its own: one bare Baileys socket (no gateway code)
 * linked to the bench's simulator, sending one text to each of BARE_MESSAGES new contacts one
 * after another. Prints its CPU time (user + system) of the sending, as JSON on the last line.
 */
import type { SimulatorInfo } from '@mgw/messenger-sim';
import { TestDevice } from '@mgw/testing';

const info = JSON.parse(process.env.BARE_SIM_INFO!) as SimulatorInfo;
const controlUrl = process.env.BARE_SIM_CONTROL_URL!;
const count = Number(process.env.BARE_MESSAGES ?? 100);

const device = new TestDevice(info);
device.connect();
const qr = await device.nextQr();
const opened = device.waitForOpen(60_000);
const res = await fetch(`${controlUrl}/phone/link`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ qr, phone: '15558990001', name: 'Bare socket' }),
});
if (!res.ok) throw new Error(`link failed: ${res.status}`);
await opened;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < count; i++)
  await device.sock!.sendMessage(`1555899${String(i).padStart(4, '0')}@s.whatsapp.net`, {
    text: `bare ${i}`,
  });
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    messages: count,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    seconds: (performance.now() - t0) / 1000,
  }),
);
await device.end();
process.exit(0);
