/**
 * The Cloud API sandbox (`MESSENGER_SANDBOX=1 npm start`, scripts/start.mjs): the simulator with one
 * business number whose credentials are printed at start, so a cloud device is configured with no
 * Meta account. Its app subscribes to the gateway's webhook endpoint (CLOUD_SANDBOX_CALLBACK_URL)
 * once the handshake passes, i.e. once a device holds the sandbox's verify token; until then it
 * asks again every few seconds.
 */
import { startCloudSim } from './index.js';
import { SANDBOX_NUMBER, SANDBOX_VERIFY_TOKEN, subscribeWhenReady } from './sandbox.js';

const port = Number(process.env.CLOUD_SANDBOX_PORT ?? 3101);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`CLOUD_SANDBOX_PORT must be a port number, got "${process.env.CLOUD_SANDBOX_PORT}"`);
  process.exit(2);
}
const sim = await startCloudSim({
  port,
  host: process.env.CLOUD_SANDBOX_HOST || '127.0.0.1',
  numbers: [{ ...SANDBOX_NUMBER }],
  // A sandbox user sees the whole life of a message: delivered, then read, a moment later.
  autoStatuses: { deliveredAfterMs: 1000, readAfterMs: 3000 },
});
console.log(`cloud-sim Graph API on ${sim.url}`);
console.log(
  `  number: phoneNumberId ${SANDBOX_NUMBER.id}, wabaId ${SANDBOX_NUMBER.wabaId}, accessToken ${SANDBOX_NUMBER.accessToken}, ` +
    `appSecret ${SANDBOX_NUMBER.appSecret}, verifyToken ${SANDBOX_VERIFY_TOKEN}`,
);
console.log(
  `  a contact writes: POST ${sim.url}/control/numbers/${SANDBOX_NUMBER.id}/inbound {"from":"15550102000","text":"hi"}`,
);

const callback = process.env.CLOUD_SANDBOX_CALLBACK_URL;
const stopSubscribing = callback
  ? subscribeWhenReady(sim, callback, () => console.log(`cloud-sim webhooks go to ${callback}`))
  : () => undefined;

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  stopSubscribing();
  console.log(`cloud-sim stopping (${signal})`);
  sim.close().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error('cloud-sim failed to stop cleanly', err);
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
