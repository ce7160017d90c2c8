/**
 * How many sequential Redis round trips a message's path costs the sender (issue 71, goal 6: at
 * most 5 before a lone message's frame leaves, at most 3 per message of a list). A whole stack (the
 * built services, the simulator in its own process, a linked device, pacing off) where only the
 * sender's Redis connections go through a slow link: this bench's tap (support/resp-tap.ts), which
 * adds BENCH_LATENCY_MS (25) to each chunk each way and reads the commands, in front of the test
 * kit's fault proxy, in front of Redis. The API, the connection service and this process reach
 * Redis directly.
 *
 * - **Lone message**: POST /send to one contact the device knows (the lookup's answer cached,
 *   Signal sessions set up by two warm-up lists: nothing asked of WhatsApp first), timed from the
 *   API's 202 to the frame's arrival at the simulator (its record of the stanza, GET
 *   /accounts/:phone/direct-messages). BENCH_LONE (8) times with the latency and as many without,
 *   in turn (ABBA), each alone: the next waits until the receipts of the last are handled and the
 *   link is quiet, and one with the latency comes BENCH_LONE_GAP_MS (6,000) after the message
 *   before it at least — past the sender's short-lived caches (the pacer keeps the device's
 *   settings 5 s), as a message after a quiet spell comes. Sequential round trips ≈ (median with −
 *   median without) ÷ (2 × latency); the job's wake-up (BullMQ's blocking read answered) adds half
 *   a trip to that, and each trip a millisecond or so of the sender's own. The same for BENCH_NEW
 *   (2) contacts the device never met (a lookup at WhatsApp and a session set up on the way: round
 *   trips to the simulator, alike with and without the latency), and at the end, after a restart of
 *   the sender, for BENCH_COLD (2) known contacts whose Signal keys the new process has not read
 *   yet (its key cache empty, as after a takeover or an eviction).
 * - **List**: POST /send to BENCH_LIST (40) known contacts, from the 202 to the last frame, with
 *   and without the latency: round trips per message ≈ (with − without) ÷ list ÷ (2 × latency),
 *   and messages per second; then a list of as many new contacts (none with BENCH_NEW=0).
 * - **Commands per lone message** (known contacts): every command Redis ran meanwhile (MONITOR,
 *   every process's), those clients sent and those scripts ran, by script; and those the sender
 *   sent through its link (the tap). Both less the background (lease renewals, liveness beats,
 *   subscription checks, BullMQ's blocking reads) at the rate of an idle stretch measured first.
 * - **The frame's path**, for each lone message with the latency: the flights it took one after
 *   another (support/flights.ts: commands the sender's connections sent within a few ms of each
 *   other with no answer coming back in between), counted back from the last answer before the
 *   frame to the job's wake-up — the round trips themselves, without the timing's noise.
 * - **The lone message's count** (issue 81, item 4: at most 5): the median of those paths' lengths
 *   for a known contact, printed against the goal beside the timing's estimate.
 * - **BENCH_TRACE=1** (`new`, `cold`: those lone messages): the last lone message with the latency,
 *   flight by flight: when each left and each connection's answers came back (ms from the 202),
 *   the answer it followed, each script by name (the SHA-1s of libs/*\/lua and of BullMQ's), the
 *   202 and the frame where they fall, `·` before the background's flights; then the frame's path
 *   and the flights after it, and the other paths the same kind of message took.
 *
 * The tap delays each chunk from the time it came, whatever else is in flight; the fault proxy's
 * own latency makes a chunk wait for the one ahead of it on its connection to be delayed first
 * (N chunks written at once arrive N × latency later). BENCH_LATENCY_AT=fault-proxy measures with
 * it instead, for comparison. BENCH_AUTH_CACHE_MB sets the sender's AUTH_CACHE_MAX_MB (0.01: every
 * Signal key read from Redis). Nothing is asserted: the figures are printed. The services run built
 * (`npm run build` first; BENCH_SOURCES=1: from the sources); BENCH_BASE=<commit> runs that
 * commit's services instead, built apart as the upgrade test builds its base (the simulator stays
 * this checkout's): the figures before a change, beside those after it.
 */
import os from 'node:os';
import { buildPreviousVersion, sleep, Stack, startFaultProxy, waitFor, type FaultProxy } from '@mgw/testing';
import { CommandCounter, type Counts } from './support/command-counts.js';
import { CommandNames, criticalPath, flightsOf, formatFlights, type Flight } from './support/flights.js';
import { nowMs, RespTap, type TappedCommand } from './support/resp-tap.js';
import { scriptNames } from './support/script-names.js';

const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 25);
const LONE = Math.max(1, Number(process.env.BENCH_LONE ?? 8));
const NEW = Math.max(0, Number(process.env.BENCH_NEW ?? 2));
const COLD = Math.max(0, Number(process.env.BENCH_COLD ?? 2));
const LIST = Math.max(1, Number(process.env.BENCH_LIST ?? 40));
/** Past the sender's short-lived caches (the pacer keeps the device's settings 5 s). */
const LONE_GAP_MS = Number(process.env.BENCH_LONE_GAP_MS ?? 6000);
const TRACE = process.env.BENCH_TRACE;
const AT_FAULT_PROXY = process.env.BENCH_LATENCY_AT === 'fault-proxy';
const BUILT = process.env.BENCH_SOURCES !== '1';
const BASE = process.env.BENCH_BASE;
const ACCOUNT = '15557730001';
/** The simulator's receipts come 400 ms (delivered) and 900 ms (read) after a message arrived. */
const RECEIPTS_MS = 1000;
/** The link is quiet after this long without a command other than the background's. */
const QUIET_MS = 300;
/** The idle stretch: long enough for the subscriptions' 10 s checks and BullMQ's 5 s blocking reads. */
const IDLE_MS = 10_000;

interface Stanza {
  id: string;
  recipient?: string;
  at: string;
}
interface Run {
  latency: number;
  /** When POST /send left, its 202 came, the (last) frame arrived, and the receipts were handled. */
  sentAt: number;
  at202: number;
  frame: number;
  end: number;
}

// BENCH_BASE: the services of that commit, built apart (the simulator stays this checkout's).
const base = BASE ? await buildPreviousVersion(BASE, (line) => console.log(`  ${line}`)) : undefined;
const stack = await Stack.start({
  senders: 0,
  ...(base ? { serviceRoot: base.root } : { built: BUILT }),
  simulatorProcess: true,
  env: { LOG_LEVEL: 'warn' },
});
let fault: FaultProxy | undefined;
let tap: RespTap | undefined;
let counter: CommandCounter | undefined;
try {
  fault = await startFaultProxy({ port: Number(new URL(stack.redisUrl).port) });
  tap = await RespTap.start({ port: fault.port });
  const link = tap;
  const setLatency = (ms: number) => (AT_FAULT_PROXY ? fault!.latency(ms) : link.latency(ms));
  // The production lease timings (the stack's are short for tests): less background on the link.
  const senderEnv = {
    REDIS_URL: link.via(stack.redisUrl),
    LEASE_TTL_MS: '15000',
    LEASE_RENEW_MS: '5000',
    LEASE_SCAN_MS: '3000',
    ...(process.env.BENCH_AUTH_CACHE_MB ? { AUTH_CACHE_MAX_MB: process.env.BENCH_AUTH_CACHE_MB } : {}),
  };
  await stack.startService('sender', senderEnv);
  await stack.linkByQr(ACCOUNT, 'Bench Round Trips');
  const scripts = scriptNames(base ? [base.root] : []);
  const names = new CommandNames(scripts, stack.deviceId);
  const contacts = Array.from({ length: LIST }, (_, i) => `1555774${String(i).padStart(4, '0')}`);
  let newContacts = 0;
  const nextNewContact = () => `1555775${String(newContacts++).padStart(4, '0')}`;

  const stanzas = async () =>
    (await stack.simApi<{ messages: Stanza[] }>('GET', `/accounts/${ACCOUNT}/direct-messages`)).messages;
  /** When the first stanza to each of `to` arrived, of those after the first `seen`. */
  const frames = async (to: string[], seen: number, timeoutMs: number) => {
    const want = new Set(to);
    const got = new Map<string, number>();
    await waitFor(
      async () => {
        for (const s of (await stanzas()).slice(seen))
          if (s.recipient && want.has(s.recipient) && !got.has(s.recipient))
            got.set(s.recipient, Date.parse(s.at));
        return got.size === want.size;
      },
      { timeoutMs, intervalMs: 10, what: `${to.length} frame(s) at the simulator` },
    );
    return [...got.values()];
  };
  // The background: what the sender sends on an idle link (set after the warm-up, which waits a
  // fixed time instead: the liveness beats, every 250 ms, leave the link never quiet).
  const idle = new Set<string>();
  const busy = () => link.commands.findLast((c) => !idle.has(names.of(c)))?.sentAt ?? 0;
  const quiet = (timeoutMs = 5000) =>
    idle.size === 0
      ? sleep(1000)
      : waitFor(() => nowMs() - busy() >= QUIET_MS, { timeoutMs, intervalMs: 20 }).catch(() => undefined);

  let lastSentAt = 0;
  /** POST /send to `to`, until its frames arrived and their receipts were handled. */
  const send = async (to: string[], latency: number, text: string): Promise<Run> => {
    setLatency(latency);
    await quiet();
    const seen = (await stanzas()).length;
    const sentAt = (lastSentAt = nowMs());
    const res = await stack.api('POST', '/send', { to: to.length === 1 ? to[0] : to, text });
    const at202 = nowMs();
    if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
    const frame = Math.max(...(await frames(to, seen, 300_000)));
    await sleep(Math.max(0, frame + RECEIPTS_MS - Date.now()));
    await quiet(10_000);
    return { latency, sentAt, at202, frame, end: nowMs() };
  };

  // Warm-up, without latency: every contact known (the lookup's answer cached), sessions set up,
  // the sender's code compiled. Then the idle stretch: the background's commands and their rate.
  for (let i = 0; i < 2; i++) await send(contacts, 0, `warm-up ${i}`);
  setLatency(0);
  counter = await CommandCounter.start(stack.redisUrl, stack.redis, scripts, (key) => names.shape(key));
  const idleFrom = nowMs();
  await sleep(IDLE_MS);
  const idleTo = nowMs();
  const idleCommands = link.commands.filter((c) => c.sentAt >= idleFrom && c.sentAt <= idleTo);
  for (const c of idleCommands) idle.add(names.of(c));
  const idleCounts = counter.counts(idleFrom, idleTo);

  /**
   * `pairs` lone messages with the latency and as many without, in turn (ABBA), to `to(i)`: one
   * with the latency comes LONE_GAP_MS after the message before it at least, as after a quiet spell.
   */
  const loneRuns = async (pairs: number, to: (i: number) => string, text: string) => {
    const runs: Run[] = [];
    for (let i = 0; i < pairs; i++)
      for (const latency of i % 2 === 0 ? [LATENCY_MS, 0] : [0, LATENCY_MS]) {
        if (latency) await sleep(Math.max(0, lastSentAt + LONE_GAP_MS - nowMs()));
        runs.push(await send([to(runs.length)], latency, `${text} ${i}`));
      }
    return runs;
  };
  const lone = await loneRuns(LONE, (i) => contacts[i % LIST]!, 'lone');
  const counted = lone.map((r) => counter!.counts(r.sentAt, r.end));
  const loneSeconds = lone.reduce((s, r) => s + (r.end - r.sentAt) / 1000, 0);
  counter.close();
  const fresh = await loneRuns(NEW, nextNewContact, 'new');
  const lists: Run[] = [];
  for (const latency of [LATENCY_MS, 0]) lists.push(await send(contacts, latency, `list ${latency}`));
  const newLists: Run[] = [];
  if (NEW)
    for (const latency of [LATENCY_MS, 0]) {
      const to = Array.from({ length: LIST }, nextNewContact);
      newLists.push(await send(to, latency, `new list ${latency}`));
    }
  // A restarted sender: known contacts whose Signal keys it has not read yet (its key cache empty).
  let cold: Run[] = [];
  if (COLD) {
    const previous = stack.senders()[0]!;
    previous.child.kill('SIGTERM');
    await previous.exited;
    await stack.startService('sender', senderEnv);
    await stack.waitForStatus('connected', 60_000);
    await sleep(2000); // its start's own work (pre-keys, app state) done
    cold = await loneRuns(COLD, (i) => contacts[i % LIST]!, 'cold');
  }

  // --- figures
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const took = (r: Run) => r.frame - r.at202;
  const trips = (runs: Run[], perMessage = 1) => {
    const at = (latency: number) => runs.filter((r) => r.latency === latency).map(took);
    const [withL, without] = [median(at(LATENCY_MS)), median(at(0))];
    return { withL, without, trips: (withL - without) / perMessage / (2 * LATENCY_MS), at };
  };
  /** Every run's figure, in order of size. */
  const each = (xs: number[]) =>
    [...xs]
      .sort((a, b) => a - b)
      .map((x) => x.toFixed(0))
      .join(' ');
  console.log(
    `${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; ` +
      `${LATENCY_MS} ms added each way to the sender's Redis link by ${AT_FAULT_PROXY ? 'the fault proxy (one chunk after another)' : 'the tap (each chunk from the time it came)'}; pacing off; ` +
      `services ${base ? `of ${base.name} (${base.commit.slice(0, 10)})` : BUILT ? 'built' : 'from the sources'}`,
  );
  const printLone = (label: string, runs: Run[], goal: string) => {
    const t = trips(runs);
    console.log(
      `  ${label}, 202 → frame at the simulator: median ${t.withL.toFixed(0)} ms with the latency ` +
        `(${each(t.at(LATENCY_MS))}), ${t.without.toFixed(0)} ms without (${each(t.at(0))}), ` +
        `${t.at(0).length} each: ${t.trips.toFixed(1)} sequential round trips${goal}`,
    );
  };
  printLone('lone message to a known contact', lone, ' (goal ≤ 5)');
  if (NEW) printLone('lone message to a new contact', fresh, '');
  if (COLD) printLone("lone message to a known contact, its keys not in the sender's cache", cold, '');
  const printList = (label: string, runs: Run[], goal: string) => {
    const [withL, without] = runs.map(took) as [number, number];
    console.log(
      `  list of ${LIST} ${label}, 202 → last frame: ${(withL / 1000).toFixed(2)} s with the latency ` +
        `(${((LIST * 1000) / withL).toFixed(1)} msg/s), ${(without / 1000).toFixed(2)} s without ` +
        `(${((LIST * 1000) / without).toFixed(1)} msg/s): ` +
        `${((withL - without) / LIST / (2 * LATENCY_MS)).toFixed(2)} round trips per message${goal}`,
    );
  };
  printList('known contacts', lists, ' (goal ≤ 3)');
  if (NEW) printList('new contacts', newLists, '');

  // Commands per lone message, the idle stretch's rate subtracted.
  const perMessage = (pick: (c: Counts) => Map<string, number>) => {
    const total = new Map<string, number>();
    for (const c of counted) for (const [k, n] of pick(c)) total.set(k, (total.get(k) ?? 0) + n);
    for (const [k, n] of pick(idleCounts))
      total.set(k, (total.get(k) ?? 0) - (n * loneSeconds * 1000) / (idleTo - idleFrom));
    return new Map([...total].map(([k, n]): [string, number] => [k, n / lone.length]));
  };
  const client = perMessage((c) => c.client);
  const inner = perMessage((c) => c.inner);
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const top = (m: Map<string, number>, n: number, fmt: (k: string, v: number) => string) =>
    [...m]
      .filter(([, v]) => v >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => fmt(k, v))
      .join(', ');
  const idleRate = ((sum(idleCounts.client) + sum(idleCounts.inner)) * 1000) / (idleTo - idleFrom);
  console.log(
    `  Redis commands per lone message, every process's (MONITOR; the idle rate, ${idleRate.toFixed(0)}/s, ` +
      `subtracted): ${(sum(client) + sum(inner)).toFixed(0)} — ${sum(client).toFixed(0)} sent by clients, ` +
      `${sum(inner).toFixed(0)} run by scripts`,
  );
  const calls = (script: string) =>
    [...client].filter(([k]) => k.endsWith(` ${script}`)).reduce((s, [, v]) => s + v, 0);
  console.log(
    `    run by scripts: ${top(inner, 10, (k, v) => `${k} ${v.toFixed(0)} (${calls(k).toFixed(1)} calls)`)}`,
  );
  console.log(`    sent by clients: ${top(client, 14, (k, v) => `${k} ${v.toFixed(1)}`)}`);
  const idleTapRate = idleCommands.length / (idleTo - idleFrom);
  const senderSent = lone.map((r) => link.commands.filter((c) => c.sentAt >= r.sentAt && c.sentAt <= r.end));
  const senderTotal = senderSent.reduce((s, cs) => s + cs.length, 0) - idleTapRate * loneSeconds * 1000;
  const bySender = new Map<string, number>();
  for (const c of senderSent.flat())
    if (!idle.has(names.of(c))) bySender.set(names.of(c), (bySender.get(names.of(c)) ?? 0) + 1);
  console.log(
    `  the sender's commands through its link per lone message (idle rate subtracted): ` +
      `${(senderTotal / lone.length).toFixed(1)}; besides the background's: ` +
      `${top(new Map([...bySender].map(([k, v]) => [k, v / lone.length])), 16, (k, v) => `${k} ${v.toFixed(1)}`)}`,
  );

  // The frame's path in each run with the latency: its flights one after another (support/flights.ts).
  const backgroundCommand = (c: TappedCommand) => idle.has(names.of(c));
  const background = (f: Flight) => f.commands.every(backgroundCommand);
  const short = (c: TappedCommand) =>
    names
      .of(c)
      .replace(/^EVALSHA /, '')
      .replace(/mgw:\{<dev>\}:/, '');
  /** A flight's commands (on connection `on` only, if given), the background's left out. */
  const step = (flights: Flight[], f: Flight, on?: number) =>
    `#${flights.indexOf(f) + 1} ${[
      ...new Set(
        f.commands.filter((c) => !backgroundCommand(c) && (on === undefined || c.conn === on)).map(short),
      ),
    ].join(' + ')}`;
  const pathOf = (r: Run) => {
    const flights = flightsOf(link, r.sentAt, r.end, backgroundCommand);
    const { steps, began } = criticalPath(flights, link, r.frame, backgroundCommand);
    const text = steps.map((st) => step(flights, st.flight, st.awaited.conn)).join(' → ');
    // The same without the flights' numbers, to tell the paths apart.
    const plain = text.replace(/#\d+ /g, '');
    return { run: r, flights, steps, ...(began ? { began } : {}), text, plain };
  };
  const pathLengths = (runs: Run[]) =>
    runs
      .filter((r) => r.latency === LATENCY_MS)
      .sort((a, b) => took(a) - took(b))
      .map((r) => `${pathOf(r).steps.length} (${took(r).toFixed(0)} ms)`)
      .join(', ');
  // The lone message's count, plainly: flights one after another from the job's wake-up (BullMQ's
  // blocking read answered) to the frame, each a round trip the frame waited for (issue 81, item 4).
  const loneFlights = lone
    .filter((r) => r.latency === LATENCY_MS)
    .map((r) => pathOf(r).steps.length)
    .sort((a, b) => a - b);
  const loneMedian = median(loneFlights);
  console.log(
    `  LONE MESSAGE, job's wake-up → frame: ${loneMedian} sequential Redis round trips (flights one after ` +
      `another, median of ${loneFlights.length} runs with the latency: ${loneFlights.join(' ')}) — goal ≤ 5: ` +
      `${loneMedian <= 5 ? 'met' : 'NOT met'}; by the timing, 202 → frame: ${trips(lone).trips.toFixed(1)} ` +
      `(with − without the latency, ÷ ${2 * LATENCY_MS} ms)`,
  );
  console.log(
    `  the frame's path in flights one after another from the job's wake-up (the tap's), each lone message ` +
      `with the latency: to a known contact ${pathLengths(lone)}` +
      (NEW ? `; to a new one ${pathLengths(fresh)}` : '') +
      (COLD ? `; known, keys not cached ${pathLengths(cold)}` : ''),
  );

  if (TRACE) {
    const [runs, what] =
      TRACE === 'new'
        ? [fresh, 'a new contact']
        : TRACE === 'cold'
          ? [cold, "a known contact, its keys not in a restarted sender's cache"]
          : [lone, 'a known contact'];
    const traced = runs.filter((r) => r.latency === LATENCY_MS).at(-1);
    if (!traced) throw new Error(`BENCH_TRACE=${TRACE} needs BENCH_${TRACE.toUpperCase()} ≥ 1`);
    const path = pathOf(traced);
    const { flights, steps, began } = path;
    const lines = formatFlights(
      flights,
      link,
      names,
      traced.at202,
      [
        { at: traced.sentAt, text: 'POST /send left' },
        { at: traced.at202, text: '202' },
        {
          at: traced.frame,
          text: `the frame at the simulator (${(traced.frame - traced.at202).toFixed(0)} ms)`,
        },
      ],
      background,
    );
    // What follows the frame: the flights after the answer it waited for (the frame left then).
    const left = steps.at(-1)?.awaited.answeredAt ?? traced.frame;
    const after = flights.filter((f) => f.start >= left && !background(f));
    const ms = (t: number) => `${t - traced.at202 >= 0 ? '+' : '−'}${Math.abs(t - traced.at202).toFixed(1)}`;
    console.log(
      `\n  BENCH_TRACE: one lone message to ${what}, ${LATENCY_MS} ms each way; ` +
        `the flights of the sender's connections (ms from the 202: left → that connection's answers back; ` +
        `[the last answer before it left]; · the background's):`,
    );
    console.log(
      `  connections: ${link.connections.map((c) => `c${c.id}${c.name ? ` ${c.name}` : ''}${c.subscriber ? ' (subscribed)' : ''}`).join(', ')}`,
    );
    for (const line of lines) console.log(line);
    console.log(
      `  the frame's path: ${steps.length} flights one after another` +
        (began
          ? `, from c${began.conn}'s answer${began.answers ? ` to ${names.of(began.answers).split(' ')[0]}` : ''} at ${ms(began.at)}`
          : '') +
        `: ${path.text}`,
    );
    console.log(
      `  after it: ${after.length} flights (the background's left out): ${after.map((f) => step(flights, f)).join(', ')}`,
    );
    // The other paths the same kind of lone message took with the latency.
    const others = new Map<string, number[]>();
    for (const p of runs.filter((r) => r !== traced && r.latency === LATENCY_MS).map(pathOf))
      if (p.plain !== path.plain) others.set(p.plain, [...(others.get(p.plain) ?? []), took(p.run)]);
    for (const [text, times] of others)
      console.log(
        `  another path, ${text.split(' → ').length} flights (${times.map((t) => `${t.toFixed(0)} ms`).join(', ')}): ${text}`,
      );
  }
} finally {
  counter?.close();
  await stack.stop();
  await tap?.stop();
  await fault?.stop();
}
process.exit(0);
