import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { Pacer, readySince } from '../src/send/pacing.js';
import { median } from '../src/fleet/queue-metrics.js';

/** Blocks this thread (the event loop) for `ms`, as a sender short of CPU would be. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('sender: how far behind its paced schedule a device is (real Redis)', () => {
  let redis: Redis;
  const device = `lag-${Math.random().toString(36).slice(2, 8)}`;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When messages go on time, then the lag is about 0; when the loop is blocked past the due time, then the lag is how late the message went; an idle window has no lag', async () => {
    // "About 0" is under 300 ms: 10 x and more the few ms an on-time message's lag is quiet, and
    // far under what a wrong count would give (the 1 s idle spell below, the 500 ms of the block).
    const pacer = new Pacer(redis, device, 100, 0);
    expect(pacer.takeLagMs(), 'nothing sent yet').to.equal(undefined);
    await pacer.wait();
    await pacer.wait(undefined, Date.now());
    expect(pacer.takeLagMs()).to.be.below(300); // quiet: 5 ms
    expect(pacer.takeLagMs(), 'a new window with nothing in it').to.equal(undefined);
    // The next message is due 100 ms after the last; the loop is stuck for 600 ms.
    const next = pacer.wait(undefined, Date.now());
    blockEventLoop(600);
    await next;
    expect(pacer.takeLagMs()).to.be.within(400, 5100); // quiet: 505 ms
    // A message that became ready long after the last one went is due when it became ready.
    await new Promise((r) => setTimeout(r, 1000));
    await pacer.wait(undefined, Date.now());
    expect(pacer.takeLagMs()).to.be.below(300); // quiet: 5 ms
  });

  it('When a message waits past its due time, then the lag counts while it waits', async () => {
    const pacer = new Pacer(redis, `${device}-w`, 100, 0);
    const before = Date.now();
    await pacer.wait();
    const sentBy = Date.now();
    const next = pacer.wait(undefined, Date.now());
    // Read before the turn starts: nothing waits yet; once its timer is due it is overdue. Asked
    // as of a second from now: the message is due 100 ms after the last send, which went between
    // \`before\` and \`sentBy\` (bounds from the clock readings themselves, none a load can overrun).
    await new Promise((r) => setTimeout(r, 10));
    const at = Date.now() + 1000;
    const lateBy = pacer.takeLagMs(at);
    expect(lateBy).to.be.within(at - sentBy - 100, at - before - 100);
    await next;
  });

  it('When a sender takes over a device that claimed a message a moment ago elsewhere, then its first message waits out the gap from that claim', async () => {
    const id = `${device}-takeover`;
    // Measured from the claim: on a busy machine a while may pass before the pacer starts.
    const claimedAt = Date.now();
    await redis.set(keys.devicePace(id), String(claimedAt), 'EX', 60);
    const pacer = new Pacer(redis, id, 400, 0);
    await pacer.wait(undefined, Date.now());
    // The gap waited out (a lower bound), not many of them: quiet: 401 ms.
    expect(Date.now() - claimedAt).to.be.within(390, 4100);
    // A device with no claim on record (new, or idle for an hour) sends its first message at once:
    // well before its 10 s gap.
    const fresh = new Pacer(redis, `${id}-fresh`, 10_000, 0);
    const t1 = Date.now();
    await fresh.wait(undefined, t1);
    expect(Date.now() - t1).to.be.below(5000); // quiet: 2 ms
  });

  it('When a job waited in the queue behind others, then its slot counts from when it was queued; a job delayed at some point (scheduled, held, retried) counts from when this run started', async () => {
    expect(readySince({ timestamp: 1000, delay: 0, processedOn: 9000 })).to.equal(1000);
    expect(readySince({ timestamp: 1000, delay: 5000, processedOn: 9000 })).to.equal(9000);
    // A backlog on a starved sender: the previous send went 100 ms ago, the gap is 100 ms, but this
    // job started only now (the previous one took 600 ms): it is ~500 ms behind its paced slot.
    const pacer = new Pacer(redis, `${device}-backlog`, 100, 0);
    const queuedAt = Date.now();
    await pacer.wait(undefined, queuedAt);
    pacer.takeLagMs();
    blockEventLoop(600);
    await pacer.wait(undefined, readySince({ timestamp: queuedAt, delay: 0, processedOn: Date.now() }));
    expect(pacer.takeLagMs()).to.be.within(400, 5100); // quiet: 505 ms
  });

  it('When a backlog message with typing reaches its turn late, then the late turn counts as lag (its typing is cut short, not pushed past the slot); the typing after an idle spell does not', async () => {
    const pacer = new Pacer(redis, `${device}-typing`, 1000, 0);
    const typing = { ms: 1000, start: () => undefined };
    const queuedAt = Date.now();
    await pacer.wait(undefined, queuedAt);
    pacer.takeLagMs();
    // On schedule the typing would fill the 1 s gap; the sender gets to the message only 700 ms
    // after the last send (a busy loop): its typing started ~700 ms late (it is cut to what is left,
    // link-preview-and-typing.test.ts), and that is the lag, as when it pushed the message back.
    blockEventLoop(700);
    await pacer.wait(typing, queuedAt);
    expect(pacer.takeLagMs()).to.be.within(600, 7000); // quiet: 700 ms
    // Idle: a message ready long after the last send types first, as planned — no lag (its 1 s of
    // typing counted as lag would be far over the bound).
    await new Promise((r) => setTimeout(r, 1500));
    const t = Date.now();
    await pacer.wait(typing, t);
    expect(Date.now() - t, 'it typed first').to.be.at.least(980);
    expect(pacer.takeLagMs()).to.be.below(300); // quiet: 10 ms
  });

  it('When devices are summed up for the sender, then the median counts (one late device is no capacity problem)', () => {
    expect(median([])).to.equal(0);
    expect(median([0.1, 30, 0.2])).to.equal(0.2);
    expect(median([1, 2, 3, 4])).to.equal(2.5);
  });
});
