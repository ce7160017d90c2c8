import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './net.js';
import { nodeAtLeast } from './node-runtime.js';
import { killGroup, launch, stopGracefully, waitListening, type Proc } from './server-process.js';

/** The launcher next to this package's `src`/`dist` (a plain .mjs: it runs on a Node without tsx). */
const LAUNCHER = fileURLToPath(new URL('../fauxqs-server.mjs', import.meta.url));
/** fauxqs's engines (it uses `node:sqlite`). */
const FAUXQS_NODE = '22.5.0';

/**
 * A private SQS-protocol server for the SQS relay's tests and bench: fauxqs (npm) on a free port
 * of 127.0.0.1, its queues and messages written through to SQLite in a temp directory, run by a
 * Node of 22.5 or later (`nodeAtLeast`: this one, the repository's `.node24`, or that one unpacked
 * now). It accepts any credentials (`credentials` below) and speaks the AWS JSON protocol
 * `@aws-sdk/client-sqs` uses; create queues with the SDK (`endpoint`), their URLs are
 * `queueUrl(name)`. A server that cannot start rejects with the reason: the test fails, it never
 * skips.
 *
 * `kill()` is a crash (SIGKILL), keeping the data directory; `restart()` starts it again on the
 * same port and data (queues and the messages it acknowledged come back); `stop()` ends it and
 * removes its directory. `inMemory`: no SQLite (3–4× the throughput here, as a remote SQS's own
 * storage costs this machine nothing), and a crash loses everything.
 */
export interface SqsServerHandle {
  /** `http://127.0.0.1:<port>`: the SDK's `endpoint`. */
  endpoint: string;
  port: number;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The URL of the queue `name` (`….fifo` for a FIFO queue) on this server. */
  queueUrl(name: string): string;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSqsServer(o: { inMemory?: boolean } = {}): Promise<SqsServerHandle> {
  const node = await nodeAtLeast(FAUXQS_NODE).catch((err: unknown) => {
    throw new Error(`could not start fauxqs: ${(err as Error).message}`);
  });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mgw-fauxqs-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FAUXQS_PORT: String(port),
    ...(o.inMemory ? {} : { MGW_FAUXQS_DATA_DIR: dir }),
    // The test process's own options (tsx, conditions) are not the launcher's.
    NODE_OPTIONS: '',
  };
  let proc: Proc;
  const boot = async () => {
    proc = launch(node, [LAUNCHER], env, dir);
    await waitListening(proc, port, 'fauxqs', 30_000);
  };
  await boot().catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    port,
    region: 'us-east-1',
    credentials: { accessKeyId: 'mgw-test', secretAccessKey: 'mgw-test-secret' },
    queueUrl: (name) => `${endpoint}/000000000000/${name}`,
    async kill() {
      killGroup(proc, 'SIGKILL');
      await proc.exited;
    },
    restart: boot,
    async stop() {
      await stopGracefully(proc, 5000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
