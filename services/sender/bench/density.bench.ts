/**
 * `npm run bench -- density`: many linked, idle accounts over several senders, as `npm start`
 * runs them (the built services, the simulator as a process of its own, production lease timings
 * and Baileys' own keep-alive, LOG_LEVEL=warn), on a Redis of the bench's own (maxclients raised:
 * every linked device holds one connection, its send worker's blocking one).
 *
 * 1. **Link** BENCH_DENSITY_ACCOUNTS (10,000; BENCH_DENSITY_QUICK=1: 1,000) accounts by the fast
 *    link (libs/testing/src/fast-link.ts: the simulator provisions each companion, the gateway's
 *    records are written by the connection service's own functions), spread over
 *    BENCH_DENSITY_SENDERS (4) senders, and wait until every one is `connected`: the time, and the
 *    peak connect rate against the configured bound (CONNECT_RATE_PER_HOST, its burst).
 * 2. **Idle** BENCH_DENSITY_IDLE_S (600; quick: 120) s, then print: RSS per sender and per account,
 *    Redis `used_memory` per linked account and its breakdown by key family (MEMORY USAGE of a
 *    sample per family, keys without a TTL), event-loop lag p99 per sender over the window, lease
 *    renewals not `renewed`, keep-alive traffic per account per minute (the simulator's socket
 *    bytes: it does nothing else while the accounts idle), and CPU per idle account.
 * 3. **Restart** every sender at once (SIGTERM, then as many new ones): an OTP and a message are
 *    queued while none runs; the time until every device is connected again, the peak connect
 *    rate, and when the OTP reached its contact after the senders were up.
 * 4. **Scale** while one device sends a BENCH_DENSITY_LIST (150)-recipient list at the default
 *    pacing: a sender added (time until it holds its fair share), the list device's holder
 *    SIGTERMed (time until its devices are held by the others) and then its next holder SIGKILLed
 *    (the same); at the end every recipient must have the list's message exactly once.
 *
 * Nothing is asserted: each figure is printed beside issue 55's goal. Run `npm run build` first.
 */
import { startRedisServer, type RedisServerHandle } from '@mgw/testing/redis-server';
import { fastLinkMany, Stack, waitFor, type ServiceProcess } from '@mgw/testing';
import { TokenStore } from '@mgw/store';
import { metric, metrics, procStats, renewals } from './support/fleet.js';
import {
  countBy,
  holders,
  info,
  keyFamilies,
  kib,
  mib,
  peakRate,
  procIo,
  secs,
  sessions,
} from './support/density.js';

const QUICK = process.env.BENCH_DENSITY_QUICK === '1';
const ACCOUNTS = Number(process.env.BENCH_DENSITY_ACCOUNTS ?? (QUICK ? 1000 : 10_000));
const SENDERS = Number(process.env.BENCH_DENSITY_SENDERS ?? 4);
const IDLE_S = Number(process.env.BENCH_DENSITY_IDLE_S ?? (QUICK ? 120 : 600));
const LIST = Number(process.env.BENCH_DENSITY_LIST ?? 150);
// The connect gate's defaults (services/sender/src/config.ts), one host here.
const HOST_RATE = 20;
const HOST_BURST = 20;
const LEASE_TTL_MS = 15_000;
const FAILOVER_MS = 3_400; // measured by the failover bench (docs/benchmarks.md)

const lines: string[] = [];
const report = (line: string) => {
  lines.push(line);
  console.log(line);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let redisServer: RedisServerHandle | undefined;
let stack: Stack | undefined;
try {
  redisServer = await startRedisServer({ args: ['--maxclients', String(ACCOUNTS * 2 + 1000)] });
  process.env.REDIS_URL = redisServer.url;
  stack = await Stack.start({
    senders: SENDERS,
    built: true,
    simulatorProcess: true,
    env: {
      LEASE_TTL_MS: String(LEASE_TTL_MS),
      LEASE_RENEW_MS: '5000',
      LEASE_SCAN_MS: '3000',
      LOG_LEVEL: 'warn',
      OTP_WAIT_TIMEOUT_MS: '120000',
    },
  });
  const s = stack;
  const redis = s.redis as import('ioredis').Redis;
  const ids = Array.from({ length: ACCOUNTS }, (_, i) => `density-${i}`);
  const idSet = new Set(ids);
  const phoneOf = (i: number) => `1557${String(i).padStart(7, '0')}`;
  const memBefore = (await info(redis, 'memory')).used_memory!;
  const simPid = s.simulator.pid!;
  /** Each sender's RSS before any device: what an account adds is measured from there. */
  const baseRss = new Map(s.senders().map((p) => [p.child.pid!, procStats(p.child.pid!).rssMiB]));
  report(
    `${process.version}; ${ACCOUNTS} accounts over ${SENDERS} senders, idle ${IDLE_S} s; simulator pid ${simPid}; Redis used_memory before linking ${mib(memBefore)} MiB`,
  );

  // --- 1. link ---------------------------------------------------------------------------------
  const tokens = new TokenStore(s.redis);
  const otpToken = (await tokens.create({ name: 'density otp', deviceId: ids[0]! })).value;
  const queuedToken = (await tokens.create({ name: 'density queued', deviceId: ids[1]! })).value;
  const listToken = (await tokens.create({ name: 'density list', deviceId: ids[2]! })).value;
  const t0 = Date.now();
  await fastLinkMany(
    s,
    ids.map((deviceId, i) => ({ deviceId, phone: phoneOf(i), name: `Density ${i}` })),
  );
  const linkedMs = Date.now() - t0;
  /** The sockets the simulator accepted since `t`: the connections the connect gate paces. */
  const loginsSince = async (t: number) =>
    (await s.simApi<{ times: number[] }>('GET', '/connections/opened')).times.filter((x) => x >= t);
  const allConnected = async (since: number) =>
    (await sessions(redis, ids)).every((x) => x.status === 'connected' && x.connectedAt >= since);
  await waitFor(() => allConnected(t0), {
    timeoutMs: 3_600_000,
    intervalMs: 5000,
    what: 'every account connected',
  });
  const first = peakRate(await loginsSince(t0), 1000);
  const tenS = peakRate(await loginsSince(t0), 10_000);
  report(
    `\n1. Linked ${ACCOUNTS} by the fast link in ${secs(linkedMs)} s; all connected ${secs(Date.now() - t0)} s after the start ` +
      `(logins over ${secs(first.spanMs)} s); peak socket opens (at the simulator) in any 1 s: ${first.peak} (bound: rate ${HOST_RATE}/s + burst ${HOST_BURST} = ${HOST_RATE + HOST_BURST}), ` +
      `in any 10 s: ${tenS.peak} (bound ${HOST_RATE * 10 + HOST_BURST})`,
  );

  // --- 2. idle -----------------------------------------------------------------------------------
  const senders = () => s.senders().filter((p) => p.child.exitCode === null);
  const scrape = async () => Promise.all(senders().map((p) => metrics(p)));
  const before = await scrape();
  const lost0 = senders().map((p) => p.output.filter((l) => l.includes('lease lost')).length);
  const cpu0 = senders().map((p) => procStats(p.child.pid!).cpuSeconds);
  const simCpu0 = procStats(simPid).cpuSeconds;
  const io0 = procIo(simPid);
  const redisCpu0 = await info(redis, 'cpu');
  await redis.config('RESETSTAT'); // the commands of the idle window only (INFO commandstats)
  await sleep(IDLE_S * 1000);
  const after = await scrape();
  const minutes = IDLE_S / 60;
  const held = countBy(await holders(redis, ids));
  report(`\n2. Idle ${IDLE_S} s:`);
  let rssTotal = 0;
  let addedTotal = 0;
  senders().forEach((p, i) => {
    const pid = p.child.pid!;
    const rss = procStats(pid).rssMiB;
    rssTotal += rss;
    const n = held.get(String(pid)) ?? 0;
    const added = rss - (baseRss.get(pid) ?? 0);
    addedTotal += added;
    const notRenewed = ['restored', 'lost', 'unknown'].map(
      (o) => renewals(after[i]!, o) - renewals(before[i]!, o),
    );
    report(
      `  sender ${pid}: ${n} devices, RSS ${rss.toFixed(0)} MiB (${(rss / Math.max(1, n)).toFixed(2)} MiB per account, goal ≤ 0.55; ${(added / Math.max(1, n)).toFixed(2)} over its ${(baseRss.get(pid) ?? 0).toFixed(0)} MiB without devices), ` +
        `heap used ${mib(metric(after[i]!, 'nodejs_heap_size_used_bytes'))} MiB; lag p99 ${(metric(after[i]!, 'nodejs_eventloop_lag_p99_seconds') * 1000).toFixed(0)} ms (goal < 100); ` +
        `renewals restored/lost/unknown ${notRenewed.join('/')}, "lease lost" lines ${p.output.filter((l) => l.includes('lease lost')).length - lost0[i]!} (goal 0); ` +
        `CPU ${(((procStats(pid).cpuSeconds - cpu0[i]!) / IDLE_S) * 100).toFixed(1)} % of a core`,
    );
  });
  const senderCpu = senders().reduce((sum, p, i) => sum + procStats(p.child.pid!).cpuSeconds - cpu0[i]!, 0);
  report(
    `  senders together: RSS ${(rssTotal / 1024).toFixed(2)} GiB (goal ≤ 5.5 for 10,000: ${(((rssTotal / ACCOUNTS) * 10_000) / 1024).toFixed(2)} GiB at this rate), ` +
      `${((rssTotal / ACCOUNTS) * 1024).toFixed(0)} KiB per account (${((addedTotal / ACCOUNTS) * 1024).toFixed(0)} KiB over the senders without devices); CPU per idle account ${((senderCpu / ACCOUNTS / minutes) * 1000).toFixed(2)} ms a minute ` +
      `(${((senderCpu / IDLE_S) * 100).toFixed(0)} % of a core for all)`,
  );
  const io1 = procIo(simPid);
  const simBytes = io1.read - io0.read + io1.written - io0.written;
  report(
    `  keep-alive traffic (the simulator's socket bytes, both ways): ${(simBytes / ACCOUNTS / minutes / 1024).toFixed(2)} KiB per account per minute; ` +
      `simulator CPU ${(((procStats(simPid).cpuSeconds - simCpu0) / IDLE_S) * 100).toFixed(0)} % of a core, RSS ${procStats(simPid).rssMiB.toFixed(0)} MiB`,
  );
  const commands = (await redis.info('commandstats'))
    .split('\r\n')
    .flatMap((l) => {
      const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(l);
      return m ? [{ name: m[1]!, calls: Number(m[2]) }] : [];
    })
    .sort((a, b) => b.calls - a.calls);
  const mem = await info(redis, 'memory');
  const cpu = await info(redis, 'cpu');
  const clients = await info(redis, 'clients');
  const redisCpu =
    cpu.used_cpu_sys! + cpu.used_cpu_user! - redisCpu0.used_cpu_sys! - redisCpu0.used_cpu_user!;
  report(
    `  Redis: used_memory ${mib(mem.used_memory!)} MiB, ${kib((mem.used_memory! - memBefore) / ACCOUNTS)} KiB per linked account (goal ≤ 100), ` +
      `of it clients ${kib((mem.mem_clients_normal ?? 0) / ACCOUNTS)} KiB; ${clients.connected_clients} connections; ` +
      `${(commands.reduce((n, c) => n + c.calls, 0) / ACCOUNTS / minutes).toFixed(1)} commands per account per minute (scripts' own included), ` +
      `CPU ${((redisCpu / IDLE_S) * 100).toFixed(0)} % of a core`,
  );
  report(
    `  Redis commands per account per minute, the most called: ${commands
      .slice(0, 8)
      .map((c) => `${c.name} ${(c.calls / ACCOUNTS / minutes).toFixed(1)}`)
      .join(', ')}`,
  );
  const families = await keyFamilies(redis, idSet);
  const perAccount = families.filter((f) => f.family.includes('{dev}'));
  report(
    `  Redis by key family (per linked account; MEMORY USAGE of a sample × keys; no TTL = kept until logout):`,
  );
  for (const f of perAccount.slice(0, 14))
    report(
      `    ${f.family.padEnd(44)} ${kib(f.bytes / ACCOUNTS).padStart(6)} KiB  ${(f.keys / ACCOUNTS).toFixed(2)} keys${f.persistent ? `, ${Math.round((f.persistent / f.keys) * 100)} % without TTL` : ''}`,
    );
  const shared = families.filter((f) => !f.family.includes('{dev}'));
  report(
    `    (keys of no device: ${shared.reduce((n, f) => n + f.keys, 0)} keys, ${mib(shared.reduce((n, f) => n + f.bytes, 0))} MiB)`,
  );

  // --- 3. restart every sender at once -------------------------------------------------------------
  const old = senders();
  const tDown = Date.now();
  old.forEach((p) => p.child.kill('SIGTERM'));
  await Promise.all(old.map((p) => p.exited));
  const downMs = Date.now() - tDown;
  const otp = s.api('POST', '/otp', { phone: '15579990001', code: '424242', language: 'English' }, otpToken);
  const queued = await s.api(
    'POST',
    '/send',
    { to: ['15579990002'], text: 'queued in the restart' },
    queuedToken,
  );
  if (queued.status !== 202) throw new Error(`queued send ${queued.status}`);
  const tStart = Date.now();
  await Promise.all(Array.from({ length: SENDERS }, () => s.startService('sender')));
  const tUp = Date.now();
  let otpAt = 0;
  await waitFor(async () => (await s.inbox('15579990001')).length > 0 && (otpAt = Date.now()) > 0, {
    timeoutMs: 600_000,
    intervalMs: 200,
    what: 'the OTP at its contact',
  });
  await waitFor(() => allConnected(tUp - 1), {
    timeoutMs: 3_600_000,
    intervalMs: 5000,
    what: 'all connected again',
  });
  const back = (await sessions(redis, ids)).map((x) => x.connectedAt);
  const logins = await loginsSince(tStart);
  const rate = peakRate(logins, 1000);
  // Where the time went: each sender's devices and when its last one was back (a sender holding
  // more than its share, or slower, sets the total), and the sockets opened more than once.
  const holderOf = await holders(redis, ids);
  const bySender = [...countBy(holderOf)].map(([pid, n]) => {
    const last = Math.max(...back.filter((_, i) => holderOf[i] === pid));
    return `${pid}: ${n} devices, last back at ${secs(last - tUp)} s`;
  });
  report(
    `\n3. Restart: ${SENDERS} senders SIGTERMed at once (drained in ${secs(downMs)} s), ${SENDERS} new ones up ${secs(tUp - tStart)} s after their start; ` +
      `all ${ACCOUNTS} connected ${secs(Math.max(...back) - tUp)} s after (goal ≤ 600 s), peak socket opens in any 1 s ${rate.peak} (bound ${HOST_RATE + HOST_BURST}), ` +
      `in any 10 s ${peakRate(logins, 10_000).peak} (bound ${HOST_RATE * 10 + HOST_BURST}); the OTP queued meanwhile at its contact ${secs(otpAt - tUp)} s after the senders were up (goal ≤ 30 s; API answered ${(await otp).status})`,
  );
  report(`  sockets opened: ${logins.length} for ${ACCOUNTS} devices; by sender: ${bySender.join('; ')}`);

  // --- 4. scale out and in, a list sending throughout -------------------------------------------
  const to = Array.from({ length: LIST }, (_, k) => `1558${String(k).padStart(7, '0')}`);
  const list = await s.api<{ messageIds: string[] }>(
    'POST',
    '/send',
    { to, text: 'density list' },
    listToken,
  );
  if (list.status !== 202) throw new Error(`list ${list.status}`);
  await sleep(5000);
  const share = (live: number) => Math.ceil(ACCOUNTS / live);
  const tAdd = Date.now();
  const added: ServiceProcess = await s.startService('sender');
  const addedPid = String(added.child.pid);
  await waitFor(
    async () => (countBy(await holders(redis, ids)).get(addedPid) ?? 0) >= share(SENDERS + 1) - SENDERS,
    {
      timeoutMs: 600_000,
      intervalMs: 1000,
      what: 'the new sender holds its share',
    },
  );
  report(
    `\n4. Scale (a ${LIST}-recipient list sending throughout): a sender added holds its share (${share(SENDERS + 1)}) ${secs(Date.now() - tAdd)} s after its start (goal ≤ 60 s)`,
  );
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const holder = (await holders(redis, [ids[2]!]))[0]!;
    const proc = senders().find((p) => String(p.child.pid) === holder);
    if (!proc) throw new Error(`no live sender holds the list device (${holder})`);
    const had = countBy(await holders(redis, ids)).get(holder) ?? 0;
    const tGone = Date.now();
    proc.child.kill(signal);
    await waitFor(async () => !(await holders(redis, ids)).some((h) => h === holder || h === ''), {
      timeoutMs: 600_000,
      intervalMs: 500,
      what: `the ${signal}ed sender's devices held by the others`,
    });
    const goal = signal === 'SIGTERM' ? LEASE_TTL_MS + 10_000 : FAILOVER_MS + LEASE_TTL_MS;
    report(
      `  ${signal} of the list device's holder (${had} devices): all held by the others ${secs(Date.now() - tGone)} s after (goal ≤ ${secs(goal)} s)`,
    );
  }
  await waitFor(
    async () => {
      const done = await Promise.all(to.map((p) => s.inbox(p)));
      return done.every((m) => m.length >= 1);
    },
    { timeoutMs: 1_800_000, intervalMs: 5000, what: 'the list delivered' },
  );
  await sleep(5000);
  const counts = await Promise.all(to.map(async (p) => (await s.inbox(p)).length));
  report(
    `  the list: ${counts.filter((c) => c === 1).length} of ${LIST} recipients got it once, ${counts.filter((c) => c > 1).length} more than once, ${counts.filter((c) => c === 0).length} never (goal: all once)`,
  );
  console.log(`\n--- summary\n${lines.join('\n')}`);
} finally {
  await stack?.stop();
  await redisServer?.stop();
}
process.exit(0);
