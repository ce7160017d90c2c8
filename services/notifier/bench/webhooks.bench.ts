/**
 * Webhook deliveries beside the sending that causes them, in one run of the whole gateway
 * (API, sender, notifier as processes; simulator; receivers on 127.0.0.1 verifying every
 * signature with `standardwebhooks`):
 *
 * - none: ROUNDS lists of the same CONTACTS with no webhook — the baseline send rate;
 * - fast: the same with a receiver that answers at once — the send rate, and the events
 *   (message.sent/delivered/read, batch.completed) delivered per second until the last one;
 * - slow: the same with a receiver that takes SLOW_MS per request — the send rate must not drop
 *   (deliveries are another process's queue; the goal is slow ≥ 0.9 × none).
 *
 * A warm-up round sets up the Signal sessions first. Rates are reported as ratios against the
 * baseline measured here, never asserted.
 */
import { Stack, WebhookReceiver, waitFor } from '@mgw/testing';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 500);

const stack = await Stack.start({
  notifier: true,
  env: { LOG_LEVEL: 'warn', ALLOWED_PRIVATE_HOSTS: '127.0.0.1' },
  sim: { receiptDelayMs: 50, readDelayMs: 100 },
});
const fast = await WebhookReceiver.start();
const slow = await WebhookReceiver.start();
slow.delayMs = SLOW_MS;
try {
  await stack.linkByQr('15557870001', 'Bench Webhooks');
  const to = Array.from({ length: CONTACTS }, (_, i) => `1555788${String(i).padStart(4, '0')}`);
  let rounds = 0;
  const sendRounds = async (n: number): Promise<number> => {
    const t0 = performance.now();
    for (let r = 0; r < n; r++) {
      const res = await stack.api('POST', '/send', { to, text: `round ${rounds + r}` });
      if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
    }
    rounds += n;
    await waitFor(() => to.every((p) => stack.sim.inbox(p).length >= rounds), {
      timeoutMs: 300_000,
      intervalMs: 20,
      what: `${rounds} rounds received`,
    });
    return (CONTACTS * n) / ((performance.now() - t0) / 1000);
  };
  const useReceiver = async (receiver: WebhookReceiver) => {
    const res = await stack.api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    if (res.status !== 200) throw new Error(`webhook: ${res.status} ${JSON.stringify(res.body)}`);
    receiver.secrets = [res.body.data.secret];
  };

  await sendRounds(1); // warm-up: Signal sessions with every contact
  const none = await sendRounds(ROUNDS);

  await useReceiver(fast);
  const t0 = performance.now();
  const withFast = await sendRounds(ROUNDS);
  const expected = CONTACTS * ROUNDS * 3 + ROUNDS; // sent, delivered, read per message; one batch.completed per list
  await waitFor(() => fast.accepted().filter((d) => d.body.type !== 'session.status').length >= expected, {
    timeoutMs: 300_000,
    intervalMs: 20,
    what: `${expected} events delivered`,
  });
  const eventSeconds = (performance.now() - t0) / 1000;
  const unverified = fast.deliveries.filter((d) => !d.verifiedWith).length;

  await useReceiver(slow);
  const withSlow = await sendRounds(ROUNDS);
  const slowArrived = slow.arrived;
  await new Promise((r) => setTimeout(r, 3000));
  const slowLater = slow.arrived;
  await stack.api('DELETE', '/webhook');

  const total = CONTACTS * ROUNDS;
  console.log(
    `${total} texts per phase (${ROUNDS} lists × ${CONTACTS} contacts, sessions set up; pacing off)`,
  );
  console.log(`  send rate, no webhook (baseline):       ${none.toFixed(0)} msg/s`);
  console.log(
    `  send rate, fast receiver:               ${withFast.toFixed(0)} msg/s  (${(withFast / none).toFixed(2)}x)`,
  );
  console.log(
    `  send rate, receiver taking ${SLOW_MS} ms:      ${withSlow.toFixed(0)} msg/s  (${(withSlow / none).toFixed(2)}x; goal ≥ 0.90x)`,
  );
  console.log(
    `  events delivered to the fast receiver:  ${expected} in ${eventSeconds.toFixed(1)} s = ${(expected / eventSeconds).toFixed(0)} events/s for ${withFast.toFixed(0)} msg/s sent (${(expected / total).toFixed(2)} events per message); ${unverified} failed verification`,
  );
  console.log(
    `  requests the slow receiver got while the phase sent: ${slowArrived}, 3 s later: ${slowLater} (one at a time per device; the rest wait in the queue)`,
  );
} finally {
  await fast.close();
  await slow.close();
  await stack.stop();
}
process.exit(0);
