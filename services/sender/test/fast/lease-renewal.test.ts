import { expect } from 'chai';
import { leaseMayStillBeOurs } from '../../src/fleet/device-fleet.js';

describe('sender: unanswered lease renewals', () => {
  it('When renewals go unanswered for less than the lease TTL, then the device is kept', () => {
    expect(leaseMayStillBeOurs(1_000, 15_000, 15_999)).to.equal(true);
  });

  it('When no renewal was confirmed for a whole lease TTL, then the lease counts as lost', () => {
    expect(leaseMayStillBeOurs(1_000, 15_000, 16_000)).to.equal(false);
    expect(leaseMayStillBeOurs(1_000, 15_000, 60_000)).to.equal(false);
  });
});
