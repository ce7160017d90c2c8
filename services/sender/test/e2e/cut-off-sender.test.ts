import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import {
  sleep,
  startFaultProxy,
  useStack,
  waitFor,
  type FaultProxy,
  type ServiceProcess,
} from '@mgw/testing';

interface Lease {
  owner: string;
  epoch: number;
}

/** One read of a sender's `mgw_leases_held`, and when its answer came. */
interface Reading {
  at: number;
  held: number;
}

/**
 * After the socket was replaced, a read of 1 past this counts as stale: under 0.1 s measured on a
 * quiet machine (7.7-10.4 s before the fix); room for a loaded CI host's scrapes and event loops.
 */
const STALE_AFTER_MS = 3_000;

describe('e2e: a sender cut off from Redis stops counting the device another sender took (real services, simulator, fault proxy)', function () {
  this.timeout(180_000);
  // The production lease timings: the takeover comes from the liveness (3 s), long before the
  // cut-off sender's 15 s lease could run out.
  const stack = useStack({ senders: 0, env: { LEASE_TTL_MS: '15000', LEASE_RENEW_MS: '5000' } }, 80);
  let proxy: FaultProxy | undefined;
  after(async () => {
    await proxy?.stop();
  });

  const lease = async () =>
    JSON.parse((await stack().redis.get(keys.lease(stack().deviceId))) ?? 'null') as Lease | null;
  const owns = (p: ServiceProcess, l: Lease | null) => Boolean(l?.owner.includes(`:${p.child.pid}:`));
  /** The sender's gauge, read from its /metrics (which waits up to a second for its readiness probe while Redis is cut off). */
  const leasesHeld = async (p: ServiceProcess) =>
    Number(
      /^mgw_leases_held (\d+)/m.exec(await (await fetch(`http://127.0.0.1:${p.port}/metrics`)).text())?.[1],
    );
  /** When a line with `message` (and `why`, if given) was logged by `p`. */
  const loggedAt = (p: ServiceProcess, message: string, why?: string) => {
    const line = p.output
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { message?: string; why?: string; timestamp: string })
      .find((l) => l.message === message && (why === undefined || l.why === why));
    return line && Date.parse(line.timestamp);
  };

  it('When its link to Redis is blackholed and another sender takes its device over, then its mgw_leases_held drops to 0 as WhatsApp replaces its socket (not 7-13 s later)', async () => {
    const s = stack();
    proxy = await startFaultProxy({ port: Number(new URL(s.redisUrl).port) });
    const cut = await s.startService('sender', { REDIS_URL: proxy.via(s.redisUrl) });
    await s.linkByQr('15550960001', 'Cut-off Account');
    const before = (await lease())!;
    expect(owns(cut, before), 'the sender behind the proxy holds the device').to.equal(true);
    const other = await s.startService('sender');
    expect(await leasesHeld(cut)).to.equal(1);
    // Sending when it is cut off (as in the chaos run): its worker's close then waits for the
    // active job, whose record cannot be written while Redis is unreachable.
    await s.redis.hset(keys.deviceSettings(s.deviceId), 'sendGapMs', '100');
    const to = Array.from({ length: 300 }, (_, i) => `1555097${String(i).padStart(4, '0')}`);
    const sent = await s.api<{ messageIds: string[] }>('POST', '/send', { to, text: 'cut off mid-list' });
    expect(sent.status).to.equal(202);
    const ids = sent.body.messageIds.slice(0, 5);
    await waitFor(
      async () =>
        (
          await Promise.all(
            ids.map(
              async (id) =>
                (await s.api<{ data: { status: string } }>('GET', `/messages/${id}`)).body.data.status,
            ),
          )
        ).every((status) => status !== 'queued'),
      { what: 'the list under way' },
    );

    // Read the gauge all along, a read every 100 ms (each may take a second while cut off).
    const readings: Reading[] = [];
    let reading = true;
    const reader = (async () => {
      const inFlight: Promise<void>[] = [];
      while (reading) {
        inFlight.push(
          leasesHeld(cut).then(
            (held) => void readings.push({ at: Date.now(), held }),
            () => undefined,
          ),
        );
        await sleep(100);
      }
      await Promise.all(inFlight);
    })();
    try {
      proxy.set('blackhole');
      const cutAt = Date.now();
      await waitFor(async () => owns(other, await lease()), {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: 'the other sender took the device over',
      });
      let replacedAt: number | undefined;
      await waitFor(() => (replacedAt = loggedAt(cut, 'device runtime ended', 'replaced')) !== undefined, {
        timeoutMs: 30_000,
        what: "the cut-off sender's socket replaced",
      });
      // Readings until it let go (a few seconds at most), and a little more.
      await waitFor(() => readings.some((r) => r.at > replacedAt! + STALE_AFTER_MS && r.held === 0), {
        timeoutMs: 20_000,
        what: 'the cut-off sender counting 0 leases',
      }).catch(() => undefined);
      await sleep(Math.max(0, replacedAt! + STALE_AFTER_MS + 1_000 - Date.now()));
      reading = false;
      await reader;

      const droppedAt = readings.find((r) => r.at > replacedAt! && r.held === 0)?.at;
      const lastCounted = readings.filter((r) => r.held > 0).at(-1)?.at;
      const s1 = (ms?: number) => (ms === undefined ? 'never' : `${((ms - cutAt) / 1000).toFixed(1)} s`);
      console.log(
        `      (cut off at 0 s; device taken over and its socket replaced at ${s1(replacedAt)}; the cut-off ` +
          `sender last counted it at ${s1(lastCounted)} and first counted 0 at ${s1(droppedAt)})`,
      );
      const stale = readings.filter((r) => r.at > replacedAt! + STALE_AFTER_MS && r.held > 0);
      expect(stale.length, 'reads of 1 well after the socket was replaced').to.equal(0);
      expect(droppedAt, 'a read of 0 after the replacement').to.be.a('number');
      expect((await lease())!.epoch).to.be.above(before.epoch);
      expect(await leasesHeld(other)).to.equal(1);
    } finally {
      reading = false;
      await reader;
      proxy.set('pass');
    }
  });
});
