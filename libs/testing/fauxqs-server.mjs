/**
 * The SQS-protocol server of the tests and bench (src/sqs-server.ts starts this file, under a
 * Node of 22.5 or later): fauxqs (npm) on 127.0.0.1:<FAUXQS_PORT>, its queues and messages
 * written through to SQLite in <MGW_FAUXQS_DATA_DIR>, so a server killed and started again has
 * every message it acknowledged (as SQS keeps what it acknowledged); without that variable, in
 * memory only. Says `fauxqs listening on 127.0.0.1:<port>` (stderr) once it accepts requests.
 */
import net from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { startFauxqs } from 'fauxqs';

// fauxqs commits every message on its own (WAL, synchronous=FULL: an fsync each), which makes the
// disk, not the server, the limit (1,000–2,000 messages/s here, 5,000+ in memory). NORMAL keeps
// every acknowledged message across a crash of the process — the crash the tests cause (SIGKILL)
// — and only a crash of the machine could lose the last ones (SQLite's WAL rule).
const exec = DatabaseSync.prototype.exec;
DatabaseSync.prototype.exec = function (sql) {
  const out = exec.call(this, sql);
  if (/^\s*PRAGMA journal_mode\s*=\s*WAL/i.test(sql)) exec.call(this, 'PRAGMA synchronous = NORMAL');
  return out;
};

// fauxqs binds every interface, with no option to say otherwise; a test server must not be
// reachable from outside the machine, so its listen is held to the loopback address.
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (first && typeof first === 'object' && first.host === '0.0.0.0')
    args[0] = { ...first, host: '127.0.0.1' };
  return listen.apply(this, args);
};

const port = Number(process.env.FAUXQS_PORT);
const dataDir = process.env.MGW_FAUXQS_DATA_DIR;
if (!port) {
  console.error('FAUXQS_PORT is required');
  process.exit(2);
}
// No `host`: queue URLs then name the address a request came to (`http://127.0.0.1:<port>/000000000000/<name>`).
const server = await startFauxqs({ port, logger: false, ...(dataDir ? { dataDir } : {}) });
console.error(`fauxqs listening on 127.0.0.1:${server.port}`);
const stop = () => void server.stop().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
