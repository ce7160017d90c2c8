/**
 * A template list to a cloud device at its number's throughput (issue 83: "a 1,000-recipient
 * template list to a cloud device at the number's throughput in a bench, ratio to the configured
 * rate ≥ 0.95").
 *
 * - gateway: one POST /send of a template to BENCH_CLOUD_LIST (1,000) fresh contacts, through the
 *   real API and sender processes (built, as `npm start` runs them), to a cloud device configured
 *   at BENCH_CLOUD_RATE (80) messages a second, the Cloud API simulator as Meta's Graph API;
 * - baseline: the same number of templates POSTed to the simulator by this process at exactly the
 *   configured rate (one every 1/rate s, a few in flight): what a perfect pacer gets from the same
 *   simulator on the same machine;
 * - control: a second such run, to contacts of its own: the noise floor.
 *
 * A run's rate is (n − 1) ÷ (the simulator's time of its last message − of its first), so the
 * accept and the queueing before the first send do not count: the rate of the sending itself. The
 * sides take turns in BENCH_REPEATS rounds (2, rounded up to a multiple of the sides), the order
 * rotating each round (libs/testing side-by-side.ts). Printed: each side's rate, gateway ÷ the
 * configured rate (the goal, with a verdict when the floor allows one) and gateway ÷ the
 * perfect pacer. Nothing is asserted.
 */
import { SANDBOX_NUMBER } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import { CloudDeviceStore } from '@mgw/store';
import { median, requireFreshBuild, SideBySide, Stack, verdict, waitFor } from '@mgw/testing';

const LIST = Number(process.env.BENCH_CLOUD_LIST ?? 1000);
const RATE = Number(process.env.BENCH_CLOUD_RATE ?? 80);
const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 2));
/** The perfect pacer's requests in flight at most (a slow answer does not delay the next slot). */
const IN_FLIGHT = 16;
const GOAL = { min: 0.95 };

type Side = 'pacer' | 'control' | 'gateway';

let stack: Stack;
let contactSeq = 0;

/** `count` contacts never written before (the tier counts unique contacts; pair rate per contact). */
function freshContacts(count: number): string[] {
  return Array.from({ length: count }, () => `1555${String(++contactSeq).padStart(7, '0')}`);
}

/** The sandbox WABA's authentication template, with its code in the body and the copy-code button. */
const CODE = [{ type: 'text', text: '482913' }];
const COMPONENTS = [
  { type: 'body', parameters: CODE },
  { type: 'button', sub_type: 'url', index: 0, parameters: CODE },
];
const TEMPLATE = { name: 'verification_code', language: { code: 'en_US' }, components: COMPONENTS };

/** The simulator's rate over the messages sent to `to`: (n − 1) ÷ (last − first), per second. */
function simRate(to: Set<string>): number {
  const at = stack.cloud
    .sent(SANDBOX_NUMBER.id)
    .filter((m) => to.has(m.waId))
    .map((m) => m.at)
    .sort((a, b) => a - b);
  if (at.length !== to.size) throw new Error(`the simulator holds ${at.length} of ${to.size} messages`);
  return (at.length - 1) / ((at.at(-1)! - at[0]!) / 1000);
}

/** The perfect pacer: one template every 1/RATE s straight to the simulator's Graph API. */
async function pacer(): Promise<number> {
  const to = freshContacts(LIST);
  const start = performance.now();
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < to.length; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    while (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    const p = fetch(`${stack.cloud.url}/v21.0/${SANDBOX_NUMBER.id}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_NUMBER.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: to[i],
        type: 'template',
        template: TEMPLATE,
      }),
    }).then(async (res) => {
      if (res.status !== 200) throw new Error(`the simulator answered ${res.status}: ${await res.text()}`);
    });
    const tracked = p.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  }
  await Promise.all(inFlight);
  return simRate(new Set(to));
}

/** The gateway: one list of LIST contacts through POST /send, until the simulator holds every one. */
async function gateway(): Promise<number> {
  const to = freshContacts(LIST);
  const res = await stack.api<{ messageIds: string[] }>('POST', '/send', {
    to,
    template: { name: TEMPLATE.name, language: 'en_US', components: COMPONENTS },
  });
  if (res.status !== 202) throw new Error(`POST /send answered ${res.status}: ${JSON.stringify(res.body)}`);
  const wanted = new Set(to);
  await waitFor(() => stack.cloud.sent(SANDBOX_NUMBER.id).filter((m) => wanted.has(m.waId)).length === LIST, {
    timeoutMs: 120_000 + (LIST * 3000) / RATE,
    intervalMs: 200,
    what: `the list of ${LIST} at the simulator`,
  });
  return simRate(wanted);
}

async function main(): Promise<void> {
  requireFreshBuild();
  // The simulator allows far more than the device is configured to: the gateway's own rate shows.
  stack = await Stack.start({
    built: true,
    cloud: {
      numbers: [{ ...SANDBOX_NUMBER, throughputPerSecond: RATE * 10, messagingLimitTier: 'TIER_UNLIMITED' }],
    },
    env: { LOG_LEVEL: 'warn' },
  });
  try {
    const devices = new CloudDeviceStore(stack.redis, stack.encryption);
    await devices.set(stack.deviceId, {
      phoneNumberId: SANDBOX_NUMBER.id,
      wabaId: SANDBOX_NUMBER.wabaId,
      accessToken: SANDBOX_NUMBER.accessToken,
      appSecret: SANDBOX_NUMBER.appSecret,
      verifyToken: 'bench-verify-token',
      throughputPerSecond: RATE,
    });
    const connected = await stack.api('POST', '/connect');
    if (connected.status !== 200) throw new Error(`/connect answered ${connected.status}`);
    await waitFor(async () => (await stack.redis.sismember(keys.linkedDevices(), stack.deviceId)) === 1, {
      what: 'the cloud device on the roster',
    });
    // One unmeasured run each: the sender and the API warm, the template list cached.
    await pacer();
    await gateway();
    const rounds = new SideBySide<Side>({
      baseline: 'pacer',
      control: 'control',
      others: ['gateway'],
      rounds: REPEATS,
    });
    console.log(`cloud-list: ${LIST} templates at ${RATE}/s; ${rounds.describe()}`);
    await rounds.run(async (side) => ({ rate: side === 'gateway' ? await gateway() : await pacer() }));
    for (const line of rounds.report({ metric: 'rate', label: 'messages/s at the simulator', digits: 1 }))
      console.log(line);
    const toRate = rounds.values('gateway', 'rate').map((r) => r / RATE);
    const floor = rounds.floor('rate');
    console.log(
      `gateway ÷ configured rate ${median(toRate).toFixed(3)} (rounds ${Math.min(...toRate).toFixed(3)}–${Math.max(...toRate).toFixed(3)})`,
    );
    console.log(verdict('gateway ÷ configured rate', median(toRate), floor, GOAL));
  } finally {
    await stack.stop();
  }
}

await main();
