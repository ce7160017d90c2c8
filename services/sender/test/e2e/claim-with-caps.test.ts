import { expect } from 'chai';
import { loadScript } from '@mgw/common/redis-scripts';
import { keys } from '@mgw/contracts';
import { openSendQueue, writeOverrides } from '@mgw/store';
import {
  RedisMonitor,
  startFaultProxy,
  useStack,
  waitFor,
  type FaultProxy,
  type ServiceProcess,
} from '@mgw/testing';

/** A script of @mgw/store's `lua/` folder, for its SHA-1 (what EVALSHA names). */
const storeLua = new URL('../lua/', import.meta.resolve('@mgw/store'));
const sha = (file: string) => loadScript(storeLua, file).sha;
const CLAIM_ADMIT = sha('message-claim-admit-8');
const CLAIM = sha('message-claim-6');
const ADMIT = sha('policy-admit-2');

interface Lease {
  owner: string;
  epoch: number;
}

/**
 * A lone message to a contact the device knows, pacing off, is claimed by one script that takes
 * its unit of the caps too (issue 81, item 4: one round trip fewer before the frame): what that
 * script decides (sent once, counted once, held unclaimed at the cap), and a sender that stops
 * between the claim and the frame (its link to Redis goes silent right after the claim ran), while
 * a second sender takes the device over: the message still ends sent, once.
 */
describe("e2e: a lone message's claim takes its unit of the caps in the same step (real services, simulator, fault proxy)", function () {
  this.timeout(180_000);
  // The production lease timings: the takeover comes from the liveness (3 s), not the lease's TTL.
  const stack = useStack({ senders: 0, env: { LEASE_TTL_MS: '15000', LEASE_RENEW_MS: '5000' } }, 80);
  const account = '15550840001';
  const contact = '15550840101';
  let proxy: FaultProxy | undefined;
  let behind: ServiceProcess;

  before(async () => {
    const s = stack();
    proxy = await startFaultProxy({ port: Number(new URL(s.redisUrl).port) });
    // The sender whose Redis link the last test silences.
    behind = await s.startService('sender', { REDIS_URL: proxy.via(s.redisUrl) });
    await s.linkByQr(account, 'Claim Caps');
  });
  after(async () => {
    proxy?.set('pass');
    await proxy?.stop();
  });
  afterEach(async () => {
    await writeOverrides(stack().redis, stack().deviceId, { dailyCap: null });
  });

  const record = async (id: string) =>
    (await stack().api<{ data: Record<string, unknown> }>('GET', `/messages/${id}`)).body.data;
  const sending = async () =>
    (await stack().api<{ sending: { sentToday: number; firstContactsToday: number } }>('GET', '/status')).body
      .sending;
  const send = async (text: string) => {
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to: contact, text });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageId;
  };
  const sent = (id: string, what: string) =>
    waitFor(async () => (await record(id)).status !== 'queued', { intervalMs: 50, what }).then(async () => {
      const r = await record(id);
      expect(['sent', 'delivered', 'read'], `${what}: ${JSON.stringify(r)}`).to.include(r.status);
      return r;
    });
  /** The scripts Redis ran by EVALSHA while `work` ran, by SHA-1. */
  const scriptsRun = async (work: () => Promise<void>) => {
    const shas: string[] = [];
    const monitor = await RedisMonitor.start(stack().redisUrl, (args, byScript) => {
      if (!byScript && args[0]?.toUpperCase() === 'EVALSHA') shas.push(args[1]!);
    });
    try {
      await work();
    } finally {
      monitor.close();
    }
    return (s: string) => shas.filter((x) => x === s).length;
  };

  it('When a lone message goes to a contact the device knows, then one script claims it and takes its unit of the caps (no admission of its own), and the contact gets it once', async () => {
    // The first message asks WhatsApp who the number is: its caps are taken before that question.
    let first = '';
    let second = '';
    const firstRuns = await scriptsRun(async () => {
      first = await send('first');
      await sent(first, 'the first message sent');
    });
    const secondRuns = await scriptsRun(async () => {
      second = await send('second');
      await sent(second, 'the second message sent');
    });

    expect(
      [firstRuns(ADMIT), firstRuns(CLAIM), firstRuns(CLAIM_ADMIT)],
      'a stranger: admission, lookup, then the claim',
    ).to.deep.equal([1, 1, 0]);
    expect(
      [secondRuns(ADMIT), secondRuns(CLAIM), secondRuns(CLAIM_ADMIT)],
      'a known contact: the claim takes the caps',
    ).to.deep.equal([0, 0, 1]);
    expect(await sending()).to.include({ sentToday: 2, firstContactsToday: 1 });
    const inbox = await stack().inbox(contact);
    expect(inbox.map((m) => m.id)).to.deep.equal(
      await Promise.all([first, second].map(async (id) => (await record(id)).platformMessageId)),
    );
    expect(inbox.map((m) => m.duplicates ?? 0)).to.deep.equal([0, 0]);
  });

  it('When the daily cap is used up, then a message to a known contact is held by its claim unclaimed (no attempt, nothing counted), and goes once when the cap allows', async () => {
    const { sentToday } = await sending();
    await writeOverrides(stack().redis, stack().deviceId, { dailyCap: sentToday });
    const id = await send('over the cap');
    const queue = openSendQueue(stack().redis, stack().deviceId);
    try {
      await waitFor(async () => (await queue.getJobState(id)) === 'delayed', {
        intervalMs: 50,
        what: 'the message held in the queue',
      });
      const held = await record(id);
      expect(held).to.include({ status: 'queued' });
      expect(held.held).to.deep.include({ reason: 'daily_cap' });
      expect(held.sendBegan, 'not claimed').to.equal(undefined);
      expect((await queue.getJob(id))!.attemptsMade, 'no attempt used').to.equal(0);
      expect((await sending()).sentToday).to.equal(sentToday);

      await writeOverrides(stack().redis, stack().deviceId, { dailyCap: sentToday + 1 });
      await (await queue.getJob(id))!.promote();
      await sent(id, 'the held message sent');
    } finally {
      await queue.close();
    }
    expect((await sending()).sentToday).to.equal(sentToday + 1);
    const platformId = (await record(id)).platformMessageId;
    expect((await stack().inbox(contact)).filter((m) => m.id === platformId)).to.have.length(1);
  });

  it('When the sender stops between the claim and the frame (its Redis link silent right after the claim ran) and another sender takes the device over, then the message ends sent, once, and stays so when the first one wakes', async () => {
    const s = stack();
    const lease = async () =>
      JSON.parse((await s.redis.get(keys.lease(s.deviceId))) ?? 'null') as Lease | null;
    const before = (await lease())!;
    expect(before.owner, 'the sender behind the proxy holds the device').to.include(`:${behind.child.pid}:`);
    const other = await s.startService('sender');
    const inboxBefore = (await s.inbox(contact)).length;

    // The claim's script reaches Redis and runs there; its answer (and all else) waits.
    const silenced = proxy!.blackholeAfter(CLAIM_ADMIT);
    const id = await send('between claim and frame');
    try {
      await silenced;
      const claimed = await s.redis.hgetall(keys.message(s.deviceId, id));
      expect(claimed.sendingAt, 'the claim ran').to.be.a('string');
      expect(claimed.sentAt, 'not sent').to.equal(undefined);
      expect(await s.inbox(contact), 'no frame left').to.have.length(inboxBefore);

      await waitFor(async () => Boolean((await lease())?.owner.includes(`:${other.child.pid}:`)), {
        timeoutMs: 60_000,
        intervalMs: 100,
        what: 'the other sender took the device over',
      });
      const r = await sent(id, 'the message sent by the other sender');
      expect(r.sendBegan, 'its earlier claim counts as a begun send').to.equal(true);
    } finally {
      proxy!.set('pass');
    }
    // The first sender gets its claim's answer late, on a socket WhatsApp replaced, and lets the
    // device go: the record keeps its `sent`, and the contact has the message once.
    const leasesHeld = async () =>
      /^mgw_leases_held (\d+)/m.exec(
        await (await fetch(`http://127.0.0.1:${behind.port}/metrics`)).text(),
      )?.[1];
    await waitFor(async () => (await leasesHeld()) === '0', {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the first sender let the device go',
    });
    const platformId = (await record(id)).platformMessageId;
    const copies = (await s.inbox(contact)).filter((m) => m.id === platformId);
    expect(copies, 'one message with its WhatsApp id').to.have.length(1);
    expect(copies[0]!.duplicates ?? 0, 'written to WhatsApp once').to.equal(0);
    expect((await record(id)).status).to.be.oneOf(['sent', 'delivered', 'read']);
  });
});
