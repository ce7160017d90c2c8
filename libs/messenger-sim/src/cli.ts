import { startSimulator } from './index.js';

const port = Number(process.env.SANDBOX_PORT ?? 3100);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`SANDBOX_PORT must be a port number, got "${process.env.SANDBOX_PORT}"`);
  process.exit(2);
}

const verbose = process.env.SANDBOX_LOG === 'debug';
const log =
  (level: string) =>
  (obj: unknown, msg?: string): void => {
    if (level === 'debug' && !verbose) return;
    console.log(
      JSON.stringify({ level, msg, ...(typeof obj === 'object' && obj !== null ? obj : { detail: obj }) }),
    );
  };

// libsignal announces every replaced session on the console; in this process it is only noise
const consoleInfo = console.info.bind(console);
console.info = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].startsWith('Closing session')) return;
  consoleInfo(...args);
};

const sim = await startSimulator({
  port,
  host: process.env.SANDBOX_HOST || '127.0.0.1',
  publicHost: process.env.SANDBOX_PUBLIC_HOST || undefined,
  mediaPort: process.env.SANDBOX_MEDIA_PORT ? Number(process.env.SANDBOX_MEDIA_PORT) : undefined,
  unknownNumbers: process.env.SANDBOX_UNKNOWN_NUMBERS === 'reject' ? 'reject' : 'create',
  stateFile: process.env.SANDBOX_STATE_FILE || undefined,
  logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
});

console.log(`messenger-sim control API listening on ${sim.controlUrl}`);
if (process.env.SANDBOX_HOST && !sim.controlUrl.includes(`//${process.env.SANDBOX_HOST}:`)) {
  console.log(
    `  (bound to ${process.env.SANDBOX_HOST}; advertised to clients as ${new URL(sim.controlUrl).hostname})`,
  );
}
console.log(`messenger-sim WhatsApp WebSocket at ${sim.info.wsUrl}`);
console.log(`root public key ${sim.info.rootPublicKey} (GET ${sim.controlUrl}/info for it and the media CA)`);
if (process.env.SANDBOX_STATE_FILE)
  console.log(`simulated phones and linked devices kept in ${process.env.SANDBOX_STATE_FILE}`);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`messenger-sim stopping (${signal})`);
  sim.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error('messenger-sim failed to stop cleanly', err);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
