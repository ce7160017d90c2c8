/**
 * The instructions bench's baseline, in a process of its own (run under callgrind): one bare
 * Baileys socket (no gateway code) linked to the bench's simulator. It sends a round — one text to
 * each of the BARE_CONTACTS contacts, BARE_IN_FLIGHT at a time, as the sender does with pacing off —
 * each time a line `round <n>` arrives on stdin, and answers `sent <n>` on stdout; `linked` once
 * it is linked. It exits when stdin closes.
 *
 * Self-contained, as bare-socket.ts (whose linking it repeats): Node runs it with its own type
 * stripping, which cannot import a sibling `.ts` module by the `.js` name the sources use.
 */
import { createInterface } from 'node:readline';
import type { SimulatorInfo } from '@mgw/messenger-sim';
import { TestDevice } from '@mgw/testing';

const info = JSON.parse(process.env.BARE_SIM_INFO!) as SimulatorInfo;
const controlUrl = process.env.BARE_SIM_CONTROL_URL!;
const contacts = (process.env.BARE_CONTACTS ?? '').split(',').filter(Boolean);
const inFlight = Number(process.env.BARE_IN_FLIGHT ?? 8);

const device = new TestDevice(info);
device.connect();
const qr = await device.nextQr();
const opened = device.waitForOpen(600_000);
const res = await fetch(`${controlUrl}/phone/link`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ qr, phone: process.env.BARE_PHONE ?? '15558990001', name: 'Bare socket' }),
});
if (!res.ok) throw new Error(`link failed: ${res.status}`);
await opened;
console.log('linked');

async function round(n: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < contacts.length) {
        const to = contacts[next++]!;
        await device.sock!.sendMessage(`${to}@s.whatsapp.net`, { text: `round ${n}` });
      }
    }),
  );
  console.log(`sent ${n}`);
}

for await (const line of createInterface({ input: process.stdin })) {
  const n = /^round (\S+)$/.exec(line)?.[1];
  if (n !== undefined) await round(n);
}
await device.end();
process.exit(0);
