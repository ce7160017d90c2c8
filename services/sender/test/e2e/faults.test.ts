/**
 * "Sent once or failed with a reason" under faults, through real processes, real Redis and the
 * simulator. Each test prints what it counted.
 */
import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { MessageStore } from '@mgw/store';
import { useStack, waitFor, type Stack } from '@mgw/testing';

const FINAL = ['sent', 'delivered', 'read', 'failed'];

/** The status of every message (its record, or its job while it is queued). */
async function statuses(stack: Stack, deviceId: string, ids: string[]) {
  const store = new MessageStore(stack.redis, 3600);
  return Promise.all(
    ids.map(async (id) => (await store.get(deviceId, id)) ?? { status: 'missing', error: '' }),
  );
}

/** Messages of `phones` the simulated contacts received after `since` (ms). */
function receivedAfter(stack: Stack, phones: string[], since: number): number {
  return phones.reduce(
    (n, p) => n + stack.sim.inbox(p).filter((m) => Date.parse(m.receivedAt) > since).length,
    0,
  );
}

const phones = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

describe('e2e faults: disconnect mid-list, and an OTP nobody could send (real services, simulator)', function () {
  this.timeout(300_000);
  const stack = useStack({ env: { OTP_WAIT_TIMEOUT_MS: '3000' } });

  async function disconnectMidList(opts: { device: string; account: string; to: string[]; gapMs?: number }) {
    const s = stack();
    const token = await s.createToken(opts.device);
    await s.linkByQr(opts.account, 'Fault Account', token);
    if (opts.gapMs) await s.redis.hset(keys.deviceSettings(opts.device), 'sendGapMs', String(opts.gapMs));
    const res = await s.api<{ messageIds: string[] }>(
      'POST',
      '/send',
      { to: opts.to, text: 'mid-list' },
      token,
    );
    expect(res.status).to.equal(202);
    const ids = res.body.messageIds;
    // Let part of the list go out, then disconnect in the middle of it.
    await waitFor(async () => (await s.redis.keys(keys.message(opts.device, '*'))).length >= 10, {
      what: 'the list under way',
    });
    const answer = await s.api('POST', '/disconnect', undefined, token);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    const answeredAt = Date.now();

    let last: { status: string }[] = [];
    await waitFor(
      async () => (last = await statuses(s, opts.device, ids)).every((r) => FINAL.includes(r.status)),
      { timeoutMs: 60_000, what: 'every message final' },
    );
    const delivered = last.filter((r) => r.status !== 'failed').length;
    const failed = last.filter((r) => r.status === 'failed');
    const lateBeforeRelink = receivedAfter(s, opts.to, answeredAt);

    // Linking the device again must not replay anything of the disconnected list.
    await s.linkByQr(opts.account, 'Fault Account', token);
    const probe = await s.api<{ messageId: string }>(
      'POST',
      '/send',
      { to: opts.to[0], text: 'after relink' },
      token,
    );
    await waitFor(async () => s.sim.inbox(opts.to[0]!).some((m) => m.text === 'after relink'), {
      what: 'a new message after the relink',
    });
    const replayed = receivedAfter(s, opts.to, answeredAt) - 1;
    console.log(
      `      (${opts.to.length} messages, gap ${opts.gapMs ?? 0} ms: ${delivered} sent before the disconnect ` +
        `answered, ${failed.length} failed (${[...new Set(failed.map((r) => (r as { error?: string }).error))].join(', ')}), ` +
        `0 queued; delivered after the answer: ${lateBeforeRelink}; replayed after relinking: ${replayed})`,
    );
    expect(probe.status).to.equal(202);
    expect(failed.every((r) => (r as { error?: string }).error === 'logged_out')).to.equal(true);
    expect(delivered + failed.length).to.equal(opts.to.length);
    expect(lateBeforeRelink, 'messages delivered after /disconnect answered').to.equal(0);
    expect(replayed, 'messages of the old link sent by the new one').to.equal(0);
  }

  it('When a 300-recipient list is disconnected mid-way (pacing off), then every message ends sent or failed (logged_out), none arrives after the answer, and a new link replays nothing', async () => {
    await disconnectMidList({ device: 'fault-fast', account: '15550810001', to: phones('1555082', 300) });
  });

  it('When a paced list is disconnected mid-way, then the same holds', async () => {
    await disconnectMidList({
      device: 'fault-paced',
      account: '15550810002',
      to: phones('1555083', 40),
      gapMs: 150,
    });
  });

  it('When no sender is alive, then an OTP answers 504 and is never delivered once a sender is back', async () => {
    const s = stack();
    await s.linkByQr('15550810003', 'OTP Account');
    const [sender] = s.senders();
    sender!.child.kill('SIGTERM');
    await sender!.exited;
    const otp = await s.api<{ messageId: string; error: string }>('POST', '/otp', {
      phone: '15550840001',
      code: '48151623',
    });
    expect(otp.status).to.equal(504);
    expect(otp.body.error).to.equal('OTP was not sent in time and will not be sent');

    await s.startService('sender');
    const after = await s.api('POST', '/send', { to: '15550840001', text: 'the sender is back' });
    expect(after.status).to.equal(202);
    await waitFor(async () => s.sim.inbox('15550840001').some((m) => m.text === 'the sender is back'), {
      what: 'a message sent by the returning sender',
    });
    const inbox = s.sim.inbox('15550840001');
    console.log(
      `      (OTP answered 504; after the sender returned the contact holds ${inbox.length} message(s), none of them the OTP)`,
    );
    expect(inbox.some((m) => m.text?.includes('48151623'))).to.equal(false);
    const record = (await statuses(s, s.deviceId, [otp.body.messageId]))[0] as {
      status: string;
      error?: string;
    };
    expect(record).to.include({ status: 'failed', error: 'otp_expired' });
  });
});

// The same fault for the services as processes of their own, and as parts of the all-in-one process
// (where they share Redis connections).
for (const allInOne of [false, true]) {
  describe(`e2e faults: Redis down for longer than a lease (real services${allInOne ? ' in the all-in-one process' : ''}, private Redis with AOF)`, function () {
    this.timeout(300_000);
    const stack = useStack({ privateRedis: true, allInOne });

    it('When Redis is killed mid-list for 10 s, then sending resumes within seconds of its return, nothing is lost, nothing reaches a contact twice, and every service tells of it in JSON lines only', async () => {
      const s = stack();
      await s.linkByQr('15550850001', 'Outage Account');
      await s.redis.hset(keys.deviceSettings(s.deviceId), 'sendGapMs', '200');
      const to = phones('1555086', 60);
      const res = await s.api<{ messageIds: string[] }>('POST', '/send', { to, text: 'through an outage' });
      expect(res.status).to.equal(202);
      const ids = res.body.messageIds;
      const sentCount = async () =>
        (await statuses(s, s.deviceId, ids)).filter((r) => r.status !== 'queued').length;
      await waitFor(async () => (await sentCount()) >= 8, { what: 'the list under way' });

      await s.killRedis();
      await new Promise((r) => setTimeout(r, 10_000));
      await s.restartRedis();
      const back = Date.now();
      const atReturn = await waitFor(async () => s.redis.status === 'ready', {
        what: 'the test client back',
      }).then(sentCount);
      await waitFor(async () => (await sentCount()) > atReturn, {
        timeoutMs: 60_000,
        what: 'sending resumed',
      });
      const resumedAfterMs = Date.now() - back;

      let last: { status: string }[] = [];
      await waitFor(
        async () => (last = await statuses(s, s.deviceId, ids)).every((r) => FINAL.includes(r.status)),
        {
          timeoutMs: 90_000,
          what: 'every message final',
        },
      );
      const failed = last.filter((r) => r.status === 'failed').length;
      const received = to.map((p) => s.sim.inbox(p).filter((m) => m.text === 'through an outage'));
      const lost = received.filter((r) => r.length === 0).length - failed;
      const duplicates = received.flat().reduce((n, m) => n + (m.duplicates ?? 0), 0);
      const twice = received.filter((r) => r.length > 1).length;
      console.log(
        `      (${ids.length} messages; Redis down 10 s; resumed ${resumedAfterMs} ms after it returned; ` +
          `lost ${lost}, failed ${failed}, shown twice ${twice}, same-id copies de-duplicated by the phone ${duplicates})`,
      );
      expect(lost).to.equal(0);
      expect(failed).to.equal(0);
      expect(twice, 'a contact shows a message twice').to.equal(0);
      // Workers retry a fetch lost to the outage every 2 s (WORKER_RUN_RETRY_DELAY_MS; BullMQ's 15 s
      // let a worker sit idle up to 15 s after Redis returned: 10.4 s seen in CI, against a 10 s
      // bound). The bound is 10 x the quiet time, so it tells a worker that sat idle for good from
      // one that resumed, not 2 s from 15 s: that figure is printed above.
      expect(resumedAfterMs).to.be.below(20_000); // quiet: 2000 ms
      // The outage was told in JSON lines, each through the redacting logger: no library printed
      // its errors raw (BullMQ does, to stderr, for an object nobody listens to for errors).
      const raw = s.processes.flatMap((p) =>
        p.output.filter((l) => !l.startsWith('{')).map((l) => `${p.name}: ${l}`),
      );
      expect(raw, 'output that is not a JSON log line').to.deep.equal([]);
    });
  });
}
