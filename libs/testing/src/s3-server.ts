import http from 'node:http';
import type { Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { freePort } from './net.js';

/** One request the S3 server received (method, path and the headers the tests look at). */
export interface RecordedS3Request {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * A private S3-protocol server for the media store's tests and bench: `s3rver` (npm) on a free
 * port of 127.0.0.1, with one bucket and its files in a temp directory. It checks SigV4 signatures
 * (of requests and pre-signed URLs, expiry included) with the key pair `S3RVER`/`S3RVER`.
 *
 * The HTTP server in front of it is ours, so a test can crash it: `kill()` destroys every open
 * connection and stops listening (the files stay), `killDuringNextUpload(n)` does so once `n`
 * bytes of the next PUT have arrived (a server gone mid-upload), `restart()` listens again on the
 * same port and files. It never skips: a server that cannot start rejects with the reason.
 */
export interface S3ServerHandle {
  endpoint: string;
  port: number;
  bucket: string;
  /** Where s3rver keeps the objects (one folder per bucket). */
  directory: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The gateway's environment for this server (`MEDIA_STORE` and the `MEDIA_S3_*` variables). */
  env: Record<string, string>;
  /** Every request so far (newest last), without bodies. */
  requests: RecordedS3Request[];
  kill(): Promise<void>;
  /** Resolves once the server was killed by an upload reaching `bytes` (see above). */
  killDuringNextUpload(bytes: number): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startS3Server(
  opts: { bucket?: string; prefix?: string } = {},
): Promise<S3ServerHandle> {
  const bucket = opts.bucket ?? 'mgw-media';
  const directory = await mkdtemp(path.join(os.tmpdir(), 'mgw-s3-'));
  const s3 = new S3rver({ silent: true, directory, configureBuckets: [{ name: bucket }] });
  try {
    await s3.configureBuckets();
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    throw new Error(`s3rver could not start: ${(err as Error).message}`);
  }
  const port = await freePort();
  const requests: RecordedS3Request[] = [];
  const sockets = new Set<Socket>();
  let armed: { bytes: number; killed: () => void } | undefined;
  const handler = s3.callback();
  let server: http.Server | undefined;

  const kill = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    const closed = new Promise<void>((r) => s.close(() => r()));
    for (const sock of sockets) sock.destroy();
    sockets.clear();
    await closed;
  };

  const listen = async () => {
    const s = http.createServer((req, res) => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      if (requests.length > 1000) requests.shift();
      const trap = armed;
      if (req.method === 'PUT' && trap) {
        armed = undefined;
        let seen = 0;
        req.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen >= trap.bytes && server === s) void kill().then(trap.killed);
        });
      }
      void handler(req, res);
    });
    s.on('connection', (sock) => {
      sockets.add(sock);
      sock.once('close', () => sockets.delete(sock));
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', (err) =>
        reject(new Error(`s3rver could not listen on 127.0.0.1:${port}: ${err.message}`)),
      );
      s.listen(port, '127.0.0.1', () => resolve());
    });
    server = s;
  };
  await listen();

  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  return {
    endpoint,
    port,
    bucket,
    directory,
    credentials,
    env: {
      MEDIA_STORE: `s3://${bucket}${opts.prefix ? `/${opts.prefix}` : ''}`,
      MEDIA_S3_ENDPOINT: endpoint,
      MEDIA_S3_REGION: 'us-east-1',
      MEDIA_S3_ACCESS_KEY_ID: credentials.accessKeyId,
      MEDIA_S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      MEDIA_S3_FORCE_PATH_STYLE: 'true',
    },
    requests,
    kill,
    killDuringNextUpload: (bytes) => new Promise<void>((killed) => (armed = { bytes, killed })),
    restart: async () => {
      if (!server) await listen();
    },
    stop: async () => {
      await kill();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
