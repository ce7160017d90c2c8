import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import {
  ConfigError,
  createLogger,
  redisConfig,
  redisEnv,
  runtimeConfig,
  runtimeEnv,
  validateEnv,
} from '../src/index.js';

describe('common: config helpers', () => {
  it('When pieces are validated, then defaults apply and every bad variable is named', () => {
    const e = validateEnv([runtimeEnv, redisEnv], {});
    expect(runtimeConfig(e)).to.deep.equal({
      nodeEnv: 'development',
      logLevel: 'info',
      shutdownTimeoutMs: 25_000,
    });
    expect(redisConfig(e).url).to.equal('redis://127.0.0.1:6379');
    expect(() => validateEnv([runtimeEnv, redisEnv], { LOG_LEVEL: 'loud', REDIS_URL: 'http://x' })).to.throw(
      ConfigError,
      /LOG_LEVEL.*REDIS_URL|REDIS_URL.*LOG_LEVEL/,
    );
  });

  it('When a cross-field rule fails, then loading fails with its message', () => {
    const rule = (env: Record<string, number>) =>
      env.SHUTDOWN_TIMEOUT_MS! < 5000 ? 'SHUTDOWN_TIMEOUT_MS must be at least 5000' : undefined;
    expect(() => validateEnv([runtimeEnv], { SHUTDOWN_TIMEOUT_MS: '2000' }, [rule])).to.throw(
      /at least 5000/,
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
