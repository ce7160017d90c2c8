import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { loadSenderConfig } from '../../src/config.js';

describe('sender config', () => {
  // The one variable without a default: every service refuses to start without a key.
  const KEY = { MGW_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}` };

  it('When only the encryption key is set, then the defaults apply, nested by what reads them', () => {
    const c = loadSenderConfig(KEY);
    expect(c.encryption.current.id).to.equal('k1');
    expect(c.messenger.lease).to.deep.equal({ ttlMs: 15_000, renewMs: 5000 });
    expect(c.store.messageRetentionSeconds).to.equal(7 * 24 * 3600);
    expect(c).to.include({ sendMinGapMs: 1000, sendGapJitterMs: 500, leaseScanMs: 3000 });
    expect(c.ops.port).to.equal(9464);
    expect(c.heapGrowingPercent).to.equal(0);
    expect(c.contactCacheTtlSeconds).to.equal(7 * 24 * 3600);
    expect(c.messageRetryMax).to.equal(5);
  });

  it('When MESSAGE_RETRY_MAX is set, then it bounds the retry receipts answered (1–50); anything else fails the start', () => {
    expect(loadSenderConfig({ ...KEY, MESSAGE_RETRY_MAX: '4' }).messageRetryMax).to.equal(4);
    for (const bad of ['0', '51', '2.5', 'many']) {
      expect(() => loadSenderConfig({ ...KEY, MESSAGE_RETRY_MAX: bad }), bad).to.throw(/MESSAGE_RETRY_MAX/);
    }
  });

  it('When SENDER_HEAP_GROWING_PERCENT is 0 or out of range, then 0 leaves V8 its own choice and the others fail the start', () => {
    expect(loadSenderConfig({ ...KEY, SENDER_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).to.equal(0);
    for (const bad of ['-1', '301', '12.5', 'lots']) {
      expect(() => loadSenderConfig({ ...KEY, SENDER_HEAP_GROWING_PERCENT: bad }), bad).to.throw(
        /SENDER_HEAP_GROWING_PERCENT/,
      );
    }
  });

  it('When the lease renewal does not fit twice in the lease TTL, then the start fails naming both variables', () => {
    expect(() => loadSenderConfig({ ...KEY, LEASE_TTL_MS: '6000', LEASE_RENEW_MS: '4000' })).to.throw(
      /LEASE_RENEW_MS \(4000\) must be at most half of LEASE_TTL_MS \(6000\)/,
    );
    expect(() => loadSenderConfig({ ...KEY, LEASE_TTL_MS: '6000', LEASE_RENEW_MS: '3000' })).to.not.throw();
  });

  it('When the sender liveness is not shorter than the lease TTL, then the start fails naming both variables', () => {
    expect(loadSenderConfig(KEY).livenessTtlMs).to.equal(3000);
    expect(() => loadSenderConfig({ ...KEY, LEASE_TTL_MS: '6000', SENDER_LIVENESS_TTL_MS: '6000' })).to.throw(
      /SENDER_LIVENESS_TTL_MS \(6000\) must be below LEASE_TTL_MS \(6000\)/,
    );
    expect(() => loadSenderConfig({ ...KEY, SENDER_LIVENESS_TTL_MS: '999' })).to.throw(
      /SENDER_LIVENESS_TTL_MS/,
    );
  });

  it('When the encryption key is missing, then the start fails saying how to generate one', () => {
    expect(() => loadSenderConfig({})).to.throw(/MGW_ENCRYPTION_KEY is required.*generate/);
  });
});
