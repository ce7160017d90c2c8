/**
 * The whole gateway against one bare Baileys socket, measured in the same run.
 *
 * - gateway: ROUNDS lists of the same C contacts through POST /send (API → Redis → BullMQ → a
 *   sender process with the Redis auth state, leases, acks and records; pacing off), until every
 *   contact has decrypted every message;
 * - baseline: the same number of texts to C other contacts from a bare Baileys socket in this
 *   process (in-memory auth state, the sender's 8 sends in flight, nothing recorded).
 *
 * Signal sessions with every contact are set up by a warm-up round first, so both runs measure
 * steady sending, not session setup. Both go through the same simulator. The ratio
 * gateway/baseline is the price of durability (records, acks, leases, fenced key writes); it is
 * reported, never asserted.
 */
import { Stack, TestDevice, waitFor } from '@mgw/testing';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const IN_FLIGHT = 8; // the sender's worker concurrency when pacing is off

const stack = await Stack.start({ env: { LOG_LEVEL: 'warn' } });
try {
  await stack.linkByQr('15557770001', 'Bench Gateway');
  const gatewayTo = Array.from({ length: CONTACTS }, (_, i) => `1555778${String(i).padStart(4, '0')}`);
  const rawTo = Array.from({ length: CONTACTS }, (_, i) => `1555779${String(i).padStart(4, '0')}`);
  const received = (to: string[], count: number) => () => to.every((p) => stack.sim.inbox(p).length >= count);
  const total = CONTACTS * ROUNDS;

  // gateway: warm-up round (sessions), then ROUNDS lists sent back to back
  await stack.api('POST', '/send', { to: gatewayTo, text: 'warm-up' });
  await waitFor(received(gatewayTo, 1), { timeoutMs: 120_000, intervalMs: 50, what: 'gateway warm-up' });
  const t0 = performance.now();
  for (let r = 0; r < ROUNDS; r++) {
    const res = await stack.api('POST', '/send', { to: gatewayTo, text: `round ${r}` });
    if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  }
  await waitFor(received(gatewayTo, 1 + ROUNDS), {
    timeoutMs: 300_000,
    intervalMs: 20,
    what: 'gateway rounds',
  });
  const gatewaySeconds = (performance.now() - t0) / 1000;

  // baseline: a bare socket, same warm-up, same number of texts, same concurrency
  const device = new TestDevice(stack.sim.info);
  device.connect();
  const qr = await device.nextQr();
  const opened = device.waitForOpen(20_000);
  await stack.sim.linkWithQr({ qr, phone: '15557770002', name: 'Bench Raw' });
  await opened;
  const sock = device.sock!;
  const sendAll = async (text: (i: number) => string, count: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < count) {
          const i = next++;
          await sock.sendMessage(`${rawTo[i % CONTACTS]!}@s.whatsapp.net`, { text: text(i) });
        }
      }),
    );
  };
  await sendAll(() => 'warm-up', CONTACTS);
  await waitFor(received(rawTo, 1), { timeoutMs: 120_000, intervalMs: 50, what: 'raw warm-up' });
  const t1 = performance.now();
  await sendAll((i) => `round ${Math.floor(i / CONTACTS)}`, total);
  await waitFor(received(rawTo, 1 + ROUNDS), { timeoutMs: 300_000, intervalMs: 20, what: 'raw rounds' });
  const rawSeconds = (performance.now() - t1) / 1000;
  await device.end();

  const gatewayRate = total / gatewaySeconds;
  const rawRate = total / rawSeconds;
  console.log(
    `${total} texts (${ROUNDS} rounds × ${CONTACTS} contacts with sessions set up; pacing off), until decrypted`,
  );
  console.log(`  bare Baileys socket (baseline): ${rawRate.toFixed(0)} msg/s`);
  console.log(`  whole gateway (POST /send):     ${gatewayRate.toFixed(0)} msg/s`);
  console.log(`  ratio gateway/baseline: ${(gatewayRate / rawRate).toFixed(2)}x`);
} finally {
  await stack.stop();
}
process.exit(0);
