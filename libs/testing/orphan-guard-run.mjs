/**
 * `node --import orphan-guard.mjs orphan-guard-run.mjs <command> [args…]`: runs a program that
 * cannot preload the orphan guard itself (redis-server, for `npm start`) so that it, too, stops
 * once the process that started this one is gone. SIGTERM and SIGINT are passed on to it; this
 * process ends with it, with its exit code. A program that does not stop within 10 s of the
 * signal is killed (SIGKILL) when this process exits — a redis-server that cannot write its data
 * on the way out (its directory gone, a full disk) refuses SIGTERM and would otherwise run on.
 */
import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: orphan-guard-run.mjs <command> [args…]\n');
  process.exit(2);
}
const child = spawn(command, args, { stdio: 'inherit' });
child.once('error', (err) => {
  process.stderr.write(`could not start ${command} (${err.message})\n`);
  process.exit(127);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    child.kill(signal);
    setTimeout(() => process.exit(1), 10_000).unref();
  });
}
process.on('exit', () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
