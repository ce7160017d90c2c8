import { expect } from 'chai';
import { loadApiConfig } from '../src/config.js';

describe('API config', () => {
  it('When the environment is empty, then the defaults apply', () => {
    const c = loadApiConfig({});
    expect(c.port).to.equal(3000);
    expect(c.redis.url).to.equal('redis://127.0.0.1:6379');
    expect(c.rateLimits).to.include({ connect: 15, disconnect: 5, status: 20, send: 30, otp: 10 });
  });

  it('When a variable is invalid, then loading fails naming it', () => {
    expect(() => loadApiConfig({ PORT: 'abc', REDIS_URL: 'http://x' })).to.throw(
      /PORT.*REDIS_URL|REDIS_URL.*PORT/,
    );
  });
});
