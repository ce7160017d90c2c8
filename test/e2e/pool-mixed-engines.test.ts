import { expect } from 'chai';
import { SANDBOX_NUMBER } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import { useStack, waitFor, type ServiceProcess } from '@mgw/testing';
import {
  createPool,
  linkDevice,
  numbers,
  recordsOf,
  sendList,
  waitForListDone,
  type Member,
} from '../support/pools.js';
import { prng } from './fuzz/requests.js';

/**
 * A pool that mixes engines (issue 83 item 5), under the chaos test's nemesis: two linked devices
 * and one Cloud API device (the Cloud API simulator as Meta's Graph API), a pooled list of 90
 * contacts who all wrote to the cloud number first (its 24-hour window open for each, as Meta's
 * webhook told the gateway), while a seeded nemesis drops the linked devices' sockets and kills
 * (SIGKILL) or stops (SIGTERM) the senders, each replaced by a new one. Bounded: NEMESIS_MS of
 * faults, then the list must end within LIST_DONE_MS; every fault targets this machine's own
 * processes and the simulators on 127.0.0.1.
 *
 * What must hold: every contact got the list at most once, counting both engines' copies (the
 * linked simulator's inbox and the messages the Cloud API simulator accepted); each one whose
 * record did not fail got it exactly once, the copy its record names; a message failed only as a
 * cloud attempt whose request may have reached Meta fails (`send_outcome_unknown`: never sent
 * blind twice) — and then no contact holds two copies of it.
 *
 * MGW_CHAOS_SEED replays a run.
 */
const ADMIN_TOKEN = 'pool-mixed-e2e-admin-token-0123456789ab';
const SEED = Number(process.env.MGW_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const NEMESIS_MS = 10_000;
const LIST_DONE_MS = 180_000;

describe(`e2e chaos: a pool of linked and Cloud API devices through sender kills and socket drops — none lost, none twice (seed ${SEED}; real services, both simulators)`, function () {
  this.timeout(420_000);
  const stack = useStack(
    {
      senders: 2,
      cloud: true,
      env: { ADMIN_API_TOKEN: ADMIN_TOKEN, POOL_MOVE_INTERVAL_MS: '300', SEND_BACKOFF_MS: '500' },
    },
    120,
  );
  const suffix = Math.random().toString(36).slice(2, 7);
  const poolId = `mixed-${suffix}`;
  let linked: Member[] = [];
  let cloudDevice: Member;
  let poolToken = '';
  const faults: string[] = [];
  const recipients = numbers('1555097', 90);

  before(async () => {
    linked = [
      await linkDevice(stack(), `ma-${suffix}`, '15550970001'),
      await linkDevice(stack(), `mb-${suffix}`, '15550970002'),
    ];
    // The cloud device: the sandbox's number, configured and connected through its own token.
    const deviceId = `mc-${suffix}`;
    const token = await stack().createToken(deviceId);
    await stack().configureSandboxCloud(token);
    const connected = await stack().api('POST', '/connect', undefined, token);
    expect(connected.body, JSON.stringify(connected.body)).to.deep.include({ status: 'connected' });
    cloudDevice = { deviceId, token, phone: SANDBOX_NUMBER.id };
    // The device holds the sandbox's verify token: the simulator's app subscribes to the gateway.
    await stack().cloudSubscribed();
    // Each contact writes to the cloud number first: Meta's webhook opens its window here.
    for (const from of recipients) stack().cloud.inbound(SANDBOX_NUMBER.id, { from, text: 'hi' });
    await waitFor(
      async () => (await stack().redis.zcard(keys.cloudWindows(deviceId))) === recipients.length,
      { timeoutMs: 60_000, what: 'every contact’s window open on the cloud device' },
    );
    poolToken = await createPool(stack(), ADMIN_TOKEN, poolId, [...linked, cloudDevice]);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(`seed ${SEED}; faults:\n${faults.join('\n')}`);
  });

  async function replaceSender(victim: ServiceProcess, signal: NodeJS.Signals): Promise<void> {
    victim.child.kill(signal);
    await victim.exited;
    await stack().startService('sender');
  }

  /** A fault every 0.8–2.4 s for NEMESIS_MS: a linked socket dropped, or a sender killed or stopped. */
  async function nemesis(random: () => number): Promise<void> {
    const end = Date.now() + NEMESIS_MS;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, 800 + random() * 1600));
      const roll = random();
      const senders = stack().senders();
      if (roll < 0.4) {
        const m = linked[Math.floor(random() * linked.length)]!;
        faults.push(`drop ${m.deviceId}`);
        await stack().simApi('POST', '/faults/drop', { phone: m.phone });
      } else if (senders.length > 0) {
        const victim = senders[Math.floor(random() * senders.length)]!;
        const signal = roll < 0.8 ? 'SIGKILL' : 'SIGTERM';
        faults.push(`${signal} ${victim.name}`);
        await replaceSender(victim, signal);
      }
    }
  }

  it('When a pooled list goes over both engines through sender kills and socket drops, then every contact gets it once, and a message fails only as a cloud attempt whose outcome Meta never told', async () => {
    const random = prng(SEED);
    // Paced sends, so the nemesis finds both engines mid-list.
    for (const m of [...linked, cloudDevice])
      await stack().redis.hset(keys.deviceSettings(m.deviceId), 'sendGapMs', '150');
    const { batchId, ids } = await sendList(stack(), poolToken, recipients, 'one list, two engines');
    await nemesis(random);
    await stack().simApi('DELETE', '/faults');
    await waitForListDone(stack(), batchId, poolToken, LIST_DONE_MS);
    const records = await recordsOf<{
      status: string;
      deviceId: string;
      error?: string;
      platformMessageId: string;
    }>(stack(), ids, poolToken);
    const byDevice = new Set(records.map((r) => r.deviceId));
    expect(byDevice.has(cloudDevice.deviceId), 'the cloud device took its share').to.equal(true);
    expect(
      linked.some((m) => byDevice.has(m.deviceId)),
      'the linked devices took theirs',
    ).to.equal(true);
    const failed = records.filter((r) => r.status === 'failed');
    expect(
      failed.filter((r) => !(r.deviceId === cloudDevice.deviceId && r.error === 'send_outcome_unknown')),
      'failed otherwise than as a cloud attempt of unknown outcome',
    ).to.deep.equal([]);
    const cloudCopies = stack().cloud.sent(SANDBOX_NUMBER.id);
    for (const [i, phone] of recipients.entries()) {
      const record = records[i]!;
      const viaCloud = cloudCopies.filter((m) => m.waId === phone && m.type === 'text');
      if (record.status !== 'failed' && record.deviceId !== cloudDevice.deviceId)
        await waitFor(async () => (await stack().inbox(phone)).length > 0, {
          timeoutMs: 10_000,
          what: `${phone} reads its copy`,
        }).catch(() => undefined);
      const inbox = await stack().inbox(phone);
      const copies = inbox.length + viaCloud.length;
      const said = `${phone}: ${inbox.length} linked and ${viaCloud.length} cloud copies; ${JSON.stringify(record)}`;
      if (record.status === 'failed') {
        expect(copies, said).to.be.at.most(1);
        continue;
      }
      expect(copies, said).to.equal(1);
      const copy = record.deviceId === cloudDevice.deviceId ? viaCloud[0]?.id : inbox[0]?.id;
      expect(copy, said).to.equal(record.platformMessageId);
    }
  });
});
