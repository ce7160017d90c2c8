import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { busyLoop, inspectorUrl, useStack, waitFor, type ServiceProcess } from '@mgw/testing';

interface Lease {
  owner: string;
  epoch: number;
}

/** The sender's schedule-lag gauge, from its /metrics. */
async function scheduleLag(p: ServiceProcess): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text();
  const m = /^mgw_sender_schedule_lag_seconds (\S+)$/m.exec(text);
  return m ? Number(m[1]) : NaN;
}

describe('e2e: a sender over its capacity sends later and keeps its devices (real services, simulator)', function () {
  this.timeout(180_000);
  // Every process opens its inspector on a free port, so the test can keep one's event loop busy.
  const stack = useStack({ senders: 2, env: { NODE_OPTIONS: '--inspect=127.0.0.1:0' } });

  it("When the holder's event loop is kept busy mid-list for longer than the lease and liveness TTLs, then it keeps its lease (same epoch, the other sender never takes it), its schedule lag rises by about the stall, and every message arrives once", async () => {
    const s = stack();
    await s.linkByQr('15550560001', 'Busy Account');
    const before = JSON.parse((await s.redis.get(keys.lease(s.deviceId)))!) as Lease;
    const holder = s.senders().find((p) => before.owner.includes(`:${p.child.pid}:`))!;
    const url = inspectorUrl(holder.output);
    expect(url, 'the holder printed its inspector URL').to.be.a('string');
    await s.redis.hset(keys.deviceSettings(s.deviceId), 'sendGapMs', '200');
    const to = Array.from({ length: 30 }, (_, i) => `1555057${String(i).padStart(4, '0')}`);
    const res = await s.api<{ messageIds: string[] }>('POST', '/send', { to, text: 'busy' });
    expect(res.status).to.equal(202);
    await waitFor(async () => (await s.inbox(to[2]!)).length === 1, { what: 'the list under way' });
    // Seconds: about 0 while it keeps up (a paced list's send is on time within tens of ms).
    expect(await scheduleLag(holder), 'lag while keeping up').to.be.below(2); // quiet: 0.1 s

    // 8 s of a synchronous loop: longer than the lease (6 s in the tests) and the liveness (3 s).
    const stallMs = 8000;
    await busyLoop(url!, stallMs);
    const after = JSON.parse((await s.redis.get(keys.lease(s.deviceId)))!) as Lease;
    expect(after, 'the same lease, never taken over').to.deep.equal(before);
    // The stall shows as lag at the next refresh of the gauge (every 5 s).
    let lag = 0;
    await waitFor(async () => (lag = await scheduleLag(holder)) >= (stallMs / 1000) * 0.5, {
      timeoutMs: 20_000,
      what: 'the schedule lag rising',
    });
    // Past the stall, at most a gap and a refresh of the gauge (seconds).
    expect(lag - stallMs / 1000, 'lag past the stall').to.be.below(10); // quiet: 1 s

    let records: { status: string; platformMessageId?: string }[] = [];
    await waitFor(
      async () =>
        (records = await Promise.all(
          res.body.messageIds.map(
            async (id) => (await s.api<{ data: (typeof records)[0] }>('GET', `/messages/${id}`)).body.data,
          ),
        )).every((r) => r.status !== 'queued'),
      { timeoutMs: 60_000, what: 'the list sent' },
    );
    expect(records.filter((r) => r.status === 'failed')).to.deep.equal([]);
    for (let i = 0; i < to.length; i++)
      expect((await s.inbox(to[i]!)).map((m) => m.id)).to.deep.equal([records[i]!.platformMessageId]);
    // Still the same lease after the list: no renewal was lost, nobody took it over.
    expect(JSON.parse((await s.redis.get(keys.lease(s.deviceId)))!)).to.deep.equal(before);
    const other = s.senders().find((p) => p !== holder)!;
    const otherMetrics = await (await fetch(`http://127.0.0.1:${other.metricsPort}/metrics`)).text();
    expect(otherMetrics).to.match(/^mgw_device_takeovers_total 0$/m);
    console.log(
      `      (event loop busy ${stallMs / 1000} s: lease kept at epoch ${before.epoch}, schedule lag ${lag} s)`,
    );
  });
});
