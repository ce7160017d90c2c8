import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { ApiError, createLogger, loadConfig, toApiError } from '../src/index.js';

describe('common: config', () => {
  it('When the environment is empty, then the defaults apply', () => {
    const c = loadConfig({});
    expect(c.port).to.equal(3000);
    expect(c.redisUrl).to.equal('redis://127.0.0.1:6379');
    expect(c.rateLimits).to.include({ connect: 15, disconnect: 5, status: 20, send: 30, otp: 10 });
  });

  it('When a variable is invalid, then loading fails naming it', () => {
    expect(() => loadConfig({ PORT: 'abc', REDIS_URL: 'http://x' })).to.throw(
      /PORT.*REDIS_URL|REDIS_URL.*PORT/,
    );
  });
});

describe('common: logger', () => {
  it('When a log line carries a token, OTP code, text or ?token= URL, then none of them is written', async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    const logger = createLogger({ service: 'test', stream });
    logger.info('request', {
      url: '/api/messenger/v1/status?token=supersecret123',
      headers: { authorization: 'Bearer abc.def' },
      job: { code: '904417', text: 'hello there', to: '15551234567' },
    });
    logger.error('failed', { err: new Error('boom') });
    logger.error('leaky', { err: new Error('GET /x?token=supersecret123 failed') });
    await new Promise((r) => setImmediate(r));
    const out = chunks.join('');
    expect(out).not.to.include('supersecret123');
    expect(out).not.to.include('abc.def');
    expect(out).not.to.include('904417');
    expect(out).not.to.include('hello there');
    expect(out).to.include('15551234567');
    const errLine = JSON.parse(chunks.find((c) => c.includes('failed')) ?? '{}');
    expect(errLine.err).to.include({ name: 'Error', message: 'boom' });
    expect(errLine.err.stack).to.be.a('string');
  });
});

describe('common: errors', () => {
  it('When an unknown error is mapped, then it is a 500 without internals', () => {
    const e = toApiError(new Error('secret internals'));
    expect(e.status).to.equal(500);
    expect(JSON.stringify(e.body())).not.to.include('secret internals');
  });

  it('When the HTTP layer raises a client error (a malformed %-escape), then it is a 400, not a 500', () => {
    const e = toApiError(Object.assign(new URIError('Failed to decode param'), { status: 400 }));
    expect(e.status).to.equal(400);
    expect(e.body()).to.include({ error: 'Invalid request data' });
  });

  it('When an ApiError has extra fields, then the body carries them', () => {
    expect(new ApiError(429, 'Rate limit exceeded', undefined, { resetIn: 5 }).body()).to.deep.equal({
      success: false,
      error: 'Rate limit exceeded',
      resetIn: 5,
    });
  });
});
