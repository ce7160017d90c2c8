/**
 * Memory per new contact: one sender (built, simulator in its own process, pacing off) whose
 * BENCH_CONTACTS_DEVICES (4) devices each send BENCH_CONTACTS_ROUNDS (4) lists of
 * BENCH_CONTACTS_LIST (1,500) recipients, every recipient a contact no device has met. After each
 * round the sender's live heap is read after a full GC (through its inspector; the bench starts
 * the services with `--expose-gc`), beside its RSS and the size of its key cache.
 *
 * A sender that keeps meeting new contacts must reach a plateau: what grows with contacts has to
 * be bounded (the key cache by AUTH_CACHE_MAX_MB, here BENCH_CONTACTS_AUTH_CACHE_MB = 8 so that
 * the bound is reached within the run; Baileys' device-list cache by its 5-minute TTL). The bench
 * prints the live heap's growth per 1,000 contacts over the first and the last round: the last
 * should be a fraction of the first. Before the Baileys patch's item 6 (patches/README.md) every
 * contact kept three 3-day timers and the key transaction they were armed in, and the heap grew
 * at the same rate to the end. Nothing is asserted: the figures are printed.
 */
import { evaluateInProcess, inspectorUrl, Stack, waitFor } from '@mgw/testing';
import { Fleet, metric, metrics, procStats, sent } from './support/fleet.js';

const DEVICES = Number(process.env.BENCH_CONTACTS_DEVICES ?? 4);
const LIST = Number(process.env.BENCH_CONTACTS_LIST ?? 1500);
const ROUNDS = Number(process.env.BENCH_CONTACTS_ROUNDS ?? 4);
const AUTH_CACHE_MB = process.env.BENCH_CONTACTS_AUTH_CACHE_MB ?? '8';

const stack = await Stack.start({
  senders: 1,
  built: true,
  simulatorProcess: true,
  env: {
    SEND_MIN_GAP_MS: '0',
    SEND_GAP_JITTER_MS: '0',
    AUTH_CACHE_MAX_MB: AUTH_CACHE_MB,
    LOG_LEVEL: 'warn',
    NODE_OPTIONS: '--inspect=127.0.0.1:0 --expose-gc',
  },
});

try {
  const fleet = new Fleet(stack);
  await fleet.linkUpTo(DEVICES);
  const sender = stack.senders()[0]!;
  const pid = sender.child.pid!;
  const url = inspectorUrl(sender.output);
  if (!url) throw new Error('the sender printed no inspector URL');
  console.log(
    `${process.version}; one sender (pid ${pid}), ${DEVICES} devices, pacing off, AUTH_CACHE_MAX_MB=${AUTH_CACHE_MB}`,
  );

  /** The sender's live heap (MiB) after a full GC, its RSS and its key cache's size. */
  const reading = async () => {
    const live = Number(await evaluateInProcess(url, 'gc(), process.memoryUsage().heapUsed')) / 2 ** 20;
    const cache = metric(await metrics(sender), 'mgw_auth_cache_bytes') / 2 ** 20;
    return { live, rss: procStats(pid).rssMiB, cache };
  };
  const print = (contacts: number, r: Awaited<ReturnType<typeof reading>>) =>
    console.log(
      `  ${String(contacts).padStart(6)} contacts: live heap ${r.live.toFixed(0)} MiB, RSS ${r.rss.toFixed(0)} MiB, key cache ${r.cache.toFixed(1)} MiB`,
    );

  const readings = [await reading()];
  print(0, readings[0]!);
  let total = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(
      fleet.linked.map(async (d, i) => {
        const to = Array.from(
          { length: LIST },
          (_, k) => `1556${round}${String(i).padStart(3, '0')}${String(k).padStart(5, '0')}`,
        );
        const res = await stack.api('POST', '/send', { to, text: `hello ${i}` }, d.token);
        if (res.status !== 202) throw new Error(`send ${res.status} ${JSON.stringify(res.body)}`);
      }),
    );
    total += DEVICES * LIST;
    await waitFor(async () => sent(await metrics(sender)) >= total, {
      timeoutMs: 900_000,
      intervalMs: 1000,
      what: `round ${round + 1} delivered`,
    });
    const r = await reading();
    readings.push(r);
    print(total, r);
  }
  const perThousand = (a: number, b: number) =>
    ((readings[b]!.live - readings[a]!.live) / ((b - a) * DEVICES * LIST)) * 1000;
  const first = perThousand(0, 1);
  const last = perThousand(ROUNDS - 1, ROUNDS);
  console.log(
    `live heap per 1,000 new contacts: first round ${first.toFixed(2)} MiB, last round ${last.toFixed(2)} MiB (last ÷ first ${(last / first).toFixed(2)}; bounded growth levels off)`,
  );
} finally {
  await stack.stop();
}
