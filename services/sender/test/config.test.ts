import { expect } from 'chai';
import { loadSenderConfig } from '../src/config.js';

describe('sender config', () => {
  it('When the environment is empty, then the defaults apply, nested by what reads them', () => {
    const c = loadSenderConfig({});
    expect(c.messenger.lease).to.deep.equal({ ttlMs: 15_000, renewMs: 5000 });
    expect(c.store.messageRetentionSeconds).to.equal(7 * 24 * 3600);
    expect(c).to.include({ sendMinGapMs: 1000, sendGapJitterMs: 500, leaseScanMs: 3000 });
    expect(c.ops.port).to.equal(9464);
  });

  it('When the lease renewal does not fit twice in the lease TTL, then the start fails naming both variables', () => {
    expect(() => loadSenderConfig({ LEASE_TTL_MS: '6000', LEASE_RENEW_MS: '4000' })).to.throw(
      /LEASE_RENEW_MS \(4000\) must be at most half of LEASE_TTL_MS \(6000\)/,
    );
    expect(() => loadSenderConfig({ LEASE_TTL_MS: '6000', LEASE_RENEW_MS: '3000' })).to.not.throw();
  });
});
