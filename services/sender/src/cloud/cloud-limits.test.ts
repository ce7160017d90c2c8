import { expect } from 'chai';
import { PairRate, ThroughputBucket } from './cloud-limits.js';

/** A clock the bucket reads and sleeps on: sleeping moves it, nothing waits for real. */
function fakeClock() {
  let now = 1_000_000;
  return {
    now: () => now,
    sleep: (ms: number) => {
      now += Math.max(0, ms);
      return Promise.resolve();
    },
  };
}

describe('sender: the Cloud API rates a cloud device keeps (throughput, pair rate)', () => {
  it('When 10 sends take a bucket of 3 a second, then no second (with the arrival margin) holds more than 3', async () => {
    const clock = fakeClock();
    const bucket = new ThroughputBucket(3, clock.now, clock.sleep);
    const times: number[] = [];
    await Promise.all(Array.from({ length: 10 }, () => bucket.take().then(() => times.push(clock.now()))));
    expect(times).to.have.length(10);
    for (let i = 3; i < times.length; i++) expect(times[i]! - times[i - 3]!).to.be.at.least(1000);
  });

  it('When the bucket is idle, then a full second of sends goes at once, and a new rate applies to the next token', async () => {
    const clock = fakeClock();
    const bucket = new ThroughputBucket(5, clock.now, clock.sleep);
    const start = clock.now();
    for (let i = 0; i < 5; i++) await bucket.take();
    expect(clock.now()).to.equal(start);
    bucket.setRate(6);
    await bucket.take();
    expect(clock.now(), 'the sixth token of a rate of 6').to.equal(start);
    await bucket.take();
    expect(clock.now()).to.be.greaterThan(start + 1000);
  });

  it('When an 11th message to one contact comes within a minute, then its slot is when the first leaves the window', () => {
    const pairs = new PairRate(10, 60_000);
    for (let i = 0; i < 10; i++) expect(pairs.take('155', 1000 + i)).to.equal(undefined);
    expect(pairs.take('155', 2000)).to.equal(61_000);
    expect(pairs.take('166', 2000), 'another contact has its own slots').to.equal(undefined);
    expect(pairs.take('155', 61_001), 'the first left the window').to.equal(undefined);
  });
});
