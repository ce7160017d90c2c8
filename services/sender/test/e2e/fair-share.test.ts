import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

const DEVICES = 6;
const LIST = 40;

/**
 * One sender holds every linked device; a second joins while each device has a list in flight.
 * The auth-state cache is bounded to a few KiB, so sessions of new contacts are evicted and read
 * back from Redis all along.
 */
describe('e2e: senders share the fleet fairly (directed hand-over, real services, simulator)', function () {
  this.timeout(300_000);
  const stack = useStack(
    {
      senders: 1,
      env: { LEASE_SCAN_MS: '400', SENDER_REBALANCE_COOLDOWN_MS: '4000', AUTH_CACHE_MAX_MB: '0.01' },
    },
    80,
  );
  const devices = Array.from(
    { length: DEVICES },
    (_, i) => `e2e-fair-${i}-${Math.random().toString(36).slice(2, 6)}`,
  );
  const tokens: string[] = [];

  before(async () => {
    for (let i = 0; i < DEVICES; i++) {
      tokens.push(await stack().createToken(devices[i]));
      await stack().linkByQr(`1555090${String(i).padStart(4, '0')}`, `Fair ${i}`, tokens[i]);
    }
  });

  const metric = async (port: number, name: string) =>
    Number(
      new RegExp(`^${name} (\\d+)`, 'm').exec(
        await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
      )?.[1] ?? 0,
    );
  async function holders(): Promise<Map<string, string[]>> {
    const byPid = new Map<string, string[]>();
    for (const d of devices) {
      const raw = await stack().redis.get(keys.lease(d));
      const pid = raw ? (/:(\d+):/.exec((JSON.parse(raw) as { owner: string }).owner)?.[1] ?? '?') : 'none';
      byPid.set(pid, [...(byPid.get(pid) ?? []), d]);
    }
    return byPid;
  }
  const recipient = (d: number, i: number) => `155519${d}${String(i).padStart(4, '0')}`;

  it('When a second sender joins during lists in flight, then it takes its share by hand-over and every message is sent exactly once', async () => {
    const [first] = stack().senders();
    expect((await holders()).get(String(first!.child.pid))).to.have.length(DEVICES);
    const sent: { to: string; id: string; token: string }[] = [];
    for (let d = 0; d < DEVICES; d++) {
      // Paced so the lists are still going when the second sender arrives.
      await stack().redis.hset(keys.deviceSettings(devices[d]!), 'sendGapMs', '250');
      const to = Array.from({ length: LIST }, (_, i) => recipient(d, i));
      const res = await stack().api<{ messageIds: string[] }>(
        'POST',
        '/send',
        { to, text: `fair ${d}` },
        tokens[d],
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      res.body.messageIds.forEach((id, i) => sent.push({ to: to[i]!, id, token: tokens[d]! }));
    }
    const records = async () =>
      Promise.all(
        sent.map(
          async (m) =>
            (
              await stack().api<{ data: Record<string, string> }>(
                'GET',
                `/messages/${m.id}`,
                undefined,
                m.token,
              )
            ).body.data,
        ),
      );
    const second = await stack().startService('sender');
    const whenJoined = await records();
    await waitFor(
      async () => {
        const h = await holders();
        return (
          h.get(String(first!.child.pid))?.length === DEVICES / 2 &&
          h.get(String(second.child.pid))?.length === DEVICES / 2
        );
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'each sender holds half of the devices' },
    );
    // The lease moves before the taker counts it (it first checks the credentials): wait for both.
    const given = () => metric(first!.port, 'mgw_device_handovers_total\\{direction="given"\\}');
    const taken = () => metric(second.port, 'mgw_device_handovers_total\\{direction="taken"\\}');
    await waitFor(async () => (await given()) >= DEVICES / 2 && (await taken()) >= DEVICES / 2, {
      timeoutMs: 15_000,
      what: 'both senders counting the hand-overs',
    });
    expect(await given()).to.equal(DEVICES / 2);
    expect(await taken()).to.equal(DEVICES / 2);
    // The lists of the devices handed over were in flight: partly sent by the first sender before
    // the second joined, partly still queued once the second held them.
    const moved = new Set((await holders()).get(String(second.child.pid)));
    const atBalance = await records();
    const ofMoved = (rs: Record<string, string>[]) => rs.filter((r) => moved.has(r.deviceId!));
    expect(ofMoved(whenJoined).filter((r) => r.status !== 'queued').length).to.be.above(0);
    expect(ofMoved(atBalance).filter((r) => r.status === 'queued').length).to.be.above(0);
    let final: Record<string, string>[] = [];
    await waitFor(async () => (final = await records()).every((r) => r.status !== 'queued'), {
      timeoutMs: 120_000,
      intervalMs: 1000,
      what: 'every list message leaves queued',
    });
    expect(final.filter((r) => r.status === 'failed')).to.deep.equal([]);
    for (let i = 0; i < sent.length; i++) {
      const inbox = await stack().inbox(sent[i]!.to);
      expect(
        inbox.map((m) => m.id),
        sent[i]!.to,
      ).to.deep.equal([final[i]!.platformMessageId]);
      // A hand-over closes the worker before the lease moves: no message is written twice.
      expect(inbox[0]!.duplicates ?? 0, sent[i]!.to).to.equal(0);
    }
    // The tiny auth cache evicted sessions all along; the sends read them back from Redis.
    expect(await metric(first!.port, 'mgw_auth_cache_total\\{result="eviction"\\}')).to.be.above(0);
  });

  it('When the shares are even, then nothing moves again: the cool-down and the share stop any ping-pong', async () => {
    const [first, second] = stack().senders();
    const before = await holders();
    // Ten scans of each sender and more than the rebalance cool-down.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await holders()).to.deep.equal(before);
    expect(await metric(first!.port, 'mgw_device_handovers_total\\{direction="given"\\}')).to.equal(
      DEVICES / 2,
    );
    expect(await metric(second!.port, 'mgw_device_handovers_total\\{direction="given"\\}')).to.equal(0);
    expect(await metric(second!.port, 'mgw_sender_fair_share')).to.equal(DEVICES / 2);
    // A second message to each contact of device 0 (held by either sender) uses the sessions
    // stored in Redis, evicted from the cache long ago.
    const to = Array.from({ length: 5 }, (_, i) => recipient(0, i));
    const res = await stack().api<{ messageIds: string[] }>(
      'POST',
      '/send',
      { to, text: 'again' },
      tokens[0],
    );
    expect(res.status).to.equal(202);
    await waitFor(
      async () =>
        (await Promise.all(to.map((t) => stack().inbox(t)))).every((inbox) =>
          inbox.some((m) => m.text === 'again'),
        ),
      { timeoutMs: 30_000, what: 'second messages delivered' },
    );
  });
});
