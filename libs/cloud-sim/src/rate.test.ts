import { expect } from 'chai';
import { SlidingWindowLimiter, TIER_LIMITS, UniqueRecipients, isTier } from './rate.js';

describe('cloud-sim: the rate counters', () => {
  it('When a key reaches its limit within the window, then the next event is refused until the oldest leaves it', () => {
    const limiter = new SlidingWindowLimiter(1000);
    for (const t of [0, 100, 200]) {
      expect(limiter.allows('n', 3, t)).to.equal(true);
      limiter.record('n', t);
    }
    expect(limiter.allows('n', 3, 999)).to.equal(false);
    expect(limiter.allows('n', 3, 1000)).to.equal(true);
    expect(limiter.allows('other', 3, 999)).to.equal(true);
  });

  it('When the limit is raised, then the same history allows more', () => {
    const limiter = new SlidingWindowLimiter(1000);
    limiter.record('n', 0);
    expect(limiter.allows('n', 1, 10)).to.equal(false);
    expect(limiter.allows('n', 2, 10)).to.equal(true);
  });

  it('When a number reached its unique recipients, then a new recipient is refused and a known one is not', () => {
    const reached = new UniqueRecipients(24 * 3600_000);
    reached.record('n', 'a', 0);
    reached.record('n', 'b', 10);
    expect(reached.allows('n', 'c', 2, 20)).to.equal(false);
    expect(reached.allows('n', 'a', 2, 20)).to.equal(true);
    expect(reached.count('n', 20)).to.equal(2);
  });

  it('When 24 hours pass since a recipient was reached, then it no longer counts', () => {
    const reached = new UniqueRecipients(24 * 3600_000);
    reached.record('n', 'a', 0);
    reached.record('n', 'b', 3600_000);
    expect(reached.allows('n', 'c', 2, 24 * 3600_000)).to.equal(true);
    expect(reached.count('n', 24 * 3600_000)).to.equal(1);
  });

  it('When a tier name is read, then only the known tiers are', () => {
    expect(isTier('TIER_1K')).to.equal(true);
    expect(isTier('TIER_3K')).to.equal(false);
    expect(isTier('toString')).to.equal(false);
    expect(TIER_LIMITS.TIER_UNLIMITED).to.equal(Infinity);
  });
});
