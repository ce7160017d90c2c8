/**
 * The behind-schedule alert, firing in a real Prometheus: one sender holding more busy devices
 * than its CPU can pace (issue 30: 300 busy devices in one sender at the default pacing, on the
 * 2 cores of the development machine), run as the fleet bench runs it (support/fleet.ts: the built
 * services, the simulator as its own process, production pacing and lease timings).
 *
 * A Prometheus server (the `prometheus` binary on PATH, support/prometheus.ts) scrapes the
 * sender's ops port every 5 s as job "sender" and evaluates the repository's rule file
 * deploy/prometheus/rules/messenger-gateway.yml unchanged every 5 s, so `MgwSenderBehindSchedule`
 * (avg_over_time(mgw_sender_schedule_lag_seconds[5m]) > 0.5 for 10 m) is the rule operators get.
 * BENCH_BEHIND_DEVICES (300) devices are linked (8 at a time), then each sends one list of
 * BENCH_BEHIND_LIST new contacts (by default as many as its pacing would take
 * BENCH_BEHIND_MAX_S to send at the 1 s minimum gap, so the demand outlasts the run). Every ~15 s a
 * line of the timeline: time since the lists were sent, the lag gauge and its 5-minute average as
 * Prometheus has them, the alert's state (inactive / pending / firing), the sender's and the
 * simulator's CPU (% of a core over the interval), the sender's RSS, messages delivered so far
 * and the interval's rate, devices connected, lease renewals lost or restored so far. It stops as
 * soon as the alert fires, or after BENCH_BEHIND_MAX_S (1,800) s of load, and says it did not
 * fire; then the lease outcomes, other alerts pending or firing, Redis's and the simulator's
 * memory, the load average and Node version. Nothing is asserted.
 *
 * Measured (docs/benchmarks.md, "Behind schedule: the alert in a real Prometheus"; Node 20, a
 * shared 2-core machine): pending 0:47 and firing 10:59 after the lists were sent, the 5-minute
 * average 0.55 → 1.31 s, 59 msg/s delivered against 240 paced, sender RSS up to 927 MiB, no lease
 * lost. A run takes 15–35 minutes (linking 300 devices ≈ 1–1.5 min).
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@mgw/testing';
import {
  Fleet,
  GAP_MS,
  JITTER_MS,
  lostLines,
  metric,
  metrics,
  procStats,
  renewals,
  sent,
  startFleetStack,
} from './support/fleet.js';
import { startPrometheus, type PrometheusHandle } from './support/prometheus.js';

const DEVICES = Number(process.env.BENCH_BEHIND_DEVICES ?? 300);
const MAX_S = Number(process.env.BENCH_BEHIND_MAX_S ?? 1800);
const LIST = Number(process.env.BENCH_BEHIND_LIST ?? Math.ceil((MAX_S * 1000) / GAP_MS));
const POLL_MS = 15_000;
const INTERVAL_S = 5;
const ALERT = 'MgwSenderBehindSchedule';
const RULES = fileURLToPath(
  new URL('../../../deploy/prometheus/rules/messenger-gateway.yml', import.meta.url),
);
const LAG = 'mgw_sender_schedule_lag_seconds{job="sender"}';
/** A device of the sender's /metrics that is connected (one line per device and state). */
const CONNECTED = /^mgw_device_connection_state\{[^}]*state="connected"[^}]*\} 1$/gm;

const stack = await startFleetStack();
const fleet = new Fleet(stack);
let prometheus: PrometheusHandle | undefined;

const mmss = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
const MiB = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

try {
  const [sender] = stack.senders();
  const pid = sender!.child.pid!;
  prometheus = await startPrometheus({
    jobs: { sender: [`127.0.0.1:${sender!.metricsPort}`] },
    ruleFiles: [RULES],
    intervalS: INTERVAL_S,
    // Linking takes minutes at 300 devices (≈ 100 s measured); a generous bound past the run.
    lifetimeS: MAX_S + 1800,
  });
  const rule = (await prometheus.alertingRules()).find((r) => r.name === ALERT);
  if (!rule) throw new Error(`${ALERT} is not among the rules Prometheus loaded from ${RULES}`);
  console.log(
    `${process.version}; one sender (pid ${pid}), simulator (pid ${stack.simulator.pid}); Prometheus ` +
      `${await prometheus.version()} at ${prometheus.url}, scrape and evaluation every ${INTERVAL_S} s`,
  );
  console.log(`  ${ALERT} as loaded: ${rule.query.trim()} for ${rule.duration} s`);

  await fleet.linkUpTo(DEVICES);
  await waitFor(() => fleet.allHeldBy(pid), {
    timeoutMs: 120_000,
    what: 'the sender holds every device',
  });
  await waitFor(async () => (await prometheus!.query(`up{job="sender"}`)).some((s) => s.value === 1), {
    timeoutMs: 30_000,
    intervalMs: 500,
    what: 'Prometheus scraping the sender',
  });

  const before = await metrics(sender!);
  const sentBefore = sent(before);
  const lostBefore = lostLines(sender!);
  const t0 = performance.now();
  const start = Date.now();
  await fleet.sendLists(DEVICES, LIST, 'behind');
  const total = DEVICES * LIST;
  const info = await stack.redis.info('memory');
  const redisUsed = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0);
  console.log(
    `\n${DEVICES} devices × ${LIST}-recipient list (new contacts), default pacing: ${total} messages ` +
      `accepted in ${((performance.now() - t0) / 1000).toFixed(0)} s (Redis used_memory ${MiB(redisUsed)} MiB); ` +
      `each list paced alone lasts ≥ ${(((LIST - 1) * GAP_MS) / 60_000).toFixed(1)} min`,
  );
  console.log(
    '  time  lag s  avg 5m s  alert     sender CPU  sim. CPU  RSS MiB  delivered  msg/s  connected  leases lost',
  );

  const simPid = stack.simulator.pid!;
  let last = { at: t0, cpu: procStats(pid).cpuSeconds, simCpu: procStats(simPid).cpuSeconds, sent: 0 };
  let firingAt: number | undefined;
  /** When the alert's current pending episode began (it resets when the alert goes inactive). */
  let pendingSince: number | undefined;
  let firstPending: number | undefined;
  let maxLag = 0;
  let maxAvg = 0;
  let maxRss = 0;
  let text = before;
  let delivered = 0;
  const notRenewed = (t: string) =>
    renewals(t, 'lost') - renewals(before, 'lost') + renewals(t, 'restored') - renewals(before, 'restored');
  for (;;) {
    const elapsed = performance.now() - t0;
    const wait = Math.min(POLL_MS, MAX_S * 1000 - elapsed);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const now = performance.now();
    const [lag, avg, alerts] = await Promise.all([
      prometheus.query(LAG),
      prometheus.query(`avg_over_time(${LAG}[5m])`),
      prometheus.alerts(),
    ]);
    text = await metrics(sender!);
    delivered = sent(text) - sentBefore;
    const stats = procStats(pid);
    const simCpu = procStats(simPid).cpuSeconds;
    const connected = text.match(CONNECTED)?.length ?? 0;
    const alert = alerts.find((a) => a.labels.alertname === ALERT);
    const state = alert?.state ?? 'inactive';
    pendingSince = alert ? Date.parse(alert.activeAt) : undefined;
    firstPending ??= pendingSince;
    const lagS = lag[0]?.value ?? NaN;
    const avgS = avg[0]?.value ?? NaN;
    maxLag = Math.max(maxLag, lagS || 0);
    maxAvg = Math.max(maxAvg, avgS || 0);
    maxRss = Math.max(maxRss, stats.rssMiB);
    const interval = (now - last.at) / 1000;
    const cpu = ((stats.cpuSeconds - last.cpu) / interval) * 100;
    const simShare = ((simCpu - last.simCpu) / interval) * 100;
    const rate = (delivered - last.sent) / interval;
    console.log(
      `  ${mmss(now - t0).padStart(5)}  ${lagS.toFixed(2).padStart(5)}  ${avgS.toFixed(2).padStart(8)}  ` +
        `${state.padEnd(8)}  ${cpu.toFixed(0).padStart(8)} %  ${simShare.toFixed(0).padStart(6)} %  ` +
        `${stats.rssMiB.toFixed(0).padStart(7)}  ${String(delivered).padStart(9)}  ${rate.toFixed(0).padStart(5)}  ` +
        `${String(connected).padStart(9)}  ${String(notRenewed(text)).padStart(11)}`,
    );
    last = { at: now, cpu: stats.cpuSeconds, simCpu, sent: delivered };
    if (state === 'firing') {
      firingAt = now;
      break;
    }
    if (now - t0 >= MAX_S * 1000 || delivered >= total) break;
  }

  const seconds = (performance.now() - t0) / 1000;
  console.log('');
  if (firingAt !== undefined) {
    console.log(
      `  ${ALERT} FIRING, seen ${mmss(firingAt - t0)} after the lists were sent (polled every ${POLL_MS / 1000} s); ` +
        `pending since ${mmss(pendingSince! - start)} (Prometheus's activeAt; first pending at ${mmss(firstPending! - start)})`,
    );
  } else {
    console.log(
      `  ${ALERT} did NOT fire in ${mmss(seconds * 1000)}` +
        (firstPending === undefined
          ? ' (never pending)'
          : pendingSince === undefined
            ? `; pending first at ${mmss(firstPending - start)}, inactive at the end`
            : `; pending since ${mmss(pendingSince - start)} (first at ${mmss(firstPending - start)})`) +
        (delivered >= total ? ' — every list was delivered first' : ''),
    );
  }
  const others = new Map<string, number>();
  for (const a of await prometheus.alerts()) {
    const key = `${a.labels.alertname} ${a.state}`;
    if (a.labels.alertname !== ALERT) others.set(key, (others.get(key) ?? 0) + 1);
  }
  const simRss = procStats(simPid).rssMiB;
  const redisNow = Number(/^used_memory:(\d+)/m.exec(await stack.redis.info('memory'))?.[1] ?? 0);
  console.log(
    `  lag gauge at most ${maxLag.toFixed(2)} s, its 5-minute average at most ${maxAvg.toFixed(2)} s; sender RSS at most ` +
      `${maxRss.toFixed(0)} MiB (heap used ${MiB(metric(text, 'nodejs_heap_size_used_bytes'))} of ` +
      `${MiB(metric(text, 'nodejs_heap_size_total_bytes'))} MiB at the end)`,
  );
  console.log(
    `  delivered ${delivered} of ${total} in ${seconds.toFixed(0)} s (${(delivered / seconds).toFixed(1)} msg/s; ` +
      `the paced ideal is ${(DEVICES / ((GAP_MS + JITTER_MS / 2) / 1000)).toFixed(0)} msg/s)`,
  );
  console.log(
    `  lease renewals not 'renewed' since the lists: restored ${renewals(text, 'restored') - renewals(before, 'restored')}, ` +
      `lost ${renewals(text, 'lost') - renewals(before, 'lost')}, unknown ${renewals(text, 'unknown') - renewals(before, 'unknown')}; ` +
      `"lease lost" lines ${lostLines(sender!) - lostBefore}`,
  );
  console.log(
    `  other alerts pending or firing: ${
      others.size ? [...others].map(([k, n]) => `${k} (${n} series)`).join(', ') : 'none'
    }`,
  );
  console.log(
    `  Redis used_memory ${MiB(redisNow)} MiB, simulator RSS ${simRss.toFixed(0)} MiB; load average ` +
      `${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ')} on ${os.cpus().length} cores; ${process.version}`,
  );
} finally {
  await prometheus?.stop();
  await stack.stop();
}
process.exit(0);
