/**
 * Preloaded (`node --import`) into the long-lived processes the test kit and `npm start` start —
 * the services of a stack and the simulator process (ORPHAN_GUARD_ARGS in src/simulator-process.ts),
 * and every process scripts/start.mjs runs (services, simulator, and through orphan-guard-run.mjs
 * its redis-server) — never into what the image runs.
 *
 * Once the process that started it is gone (killed with SIGKILL, say, which leaves it no chance
 * to stop its children), the process stops itself: SIGTERM, its own graceful stop, and a hard
 * exit 10 s later if that hangs. Without it such orphans lived on against the suite's Redis and
 * took the jobs of a later stack that was given the same database (its `linkByQr` then failed
 * with `qr_timeout`), and a killed `npm start` left its services holding ports 3000 and 3100. An
 * orphan is re-parented (to init or a subreaper), so `process.ppid` changes; it is read once a
 * second, and the timer does not keep the process alive.
 */
const parent = process.ppid;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  process.kill(process.pid, 'SIGTERM');
  setTimeout(() => process.exit(1), 10_000).unref();
}, 1_000);
timer.unref();
