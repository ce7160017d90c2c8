import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { loadApiConfig } from '../../src/config.js';

describe('API config', () => {
  const KEY = { MGW_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}` };

  it('When only the encryption key is set, then the defaults apply', () => {
    const c = loadApiConfig(KEY);
    expect(c.encryption.current.id).to.equal('k1');
    expect(c.encryption.old).to.deep.equal([]);
    expect(c.port).to.equal(3000);
    expect(c.redis.url).to.equal('redis://127.0.0.1:6379');
    expect(c.rateLimits).to.include({
      connect: 15,
      disconnect: 5,
      status: 20,
      send: 30,
      otp: 10,
      contacts: 10,
    });
    expect(c.contactCheck).to.deep.equal({ lookupsPerDay: 1000, batchSize: 50, pauseMs: 1000 });
  });

  it('When the encryption key is missing, then loading fails saying how to generate one', () => {
    expect(() => loadApiConfig({})).to.throw(/MGW_ENCRYPTION_KEY is required.*npm run -s keys -- generate/);
  });

  it('When a variable is invalid, then loading fails naming it', () => {
    expect(() => loadApiConfig({ PORT: 'abc', REDIS_URL: 'http://x' })).to.throw(
      /PORT.*REDIS_URL|REDIS_URL.*PORT/,
    );
  });
});
