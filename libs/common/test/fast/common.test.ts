import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import {
  ConfigError,
  createLogger,
  isoNow,
  logDirect,
  redisConfig,
  redisEnv,
  runtimeConfig,
  runtimeEnv,
  validateEnv,
} from '../../src/index.js';

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

  it('When REDIS_CLUSTER_NODES names seeds, then the config selects a cluster with them, its TLS and credentials; bad seeds stop the start naming the variable', () => {
    const e = validateEnv([redisEnv], {
      REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-1.internal:7001 ',
      REDIS_CLUSTER_TLS: 'true',
      REDIS_CLUSTER_PASSWORD: 'pw',
    });
    expect(redisConfig(e)).to.deep.equal({
      url: 'redis://127.0.0.1:6379',
      commandTimeoutMs: 5000,
      cluster: {
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: 'redis-1.internal', port: 7001 },
        ],
        tls: true,
        password: 'pw',
      },
    });
    expect(redisConfig(validateEnv([redisEnv], { REDIS_CLUSTER_NODES: '' })).cluster).to.equal(undefined);
    for (const bad of ['redis-1', '10.0.0.1:7000;10.0.0.2:7000', 'a:b', '10.0.0.1:7000,']) {
      expect(() => validateEnv([redisEnv], { REDIS_CLUSTER_NODES: bad }), bad).to.throw(
        ConfigError,
        /REDIS_CLUSTER_NODES: must be comma-separated host:port seeds/,
      );
    }
    expect(() => redisConfig(validateEnv([redisEnv], { REDIS_CLUSTER_NODES: 'h:99999' }))).to.throw(
      ConfigError,
      /REDIS_CLUSTER_NODES: h:99999 has no valid port/,
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
      headers: { authorization: 'Bearer abc.def', cookie: 'sid=cookie-secret' },
      job: { otpCode: '904417', otp: { language: 'English', code: '774411' }, text: 'hello there' },
      accessToken: 'access-secret-9',
      to: '15551234567',
    });
    logger.error('failed', { err: new Error('boom') });
    logger.error('leaky', { err: new Error('GET /x?token=supersecret123 failed') });
    await new Promise((r) => setImmediate(r));
    const out = chunks.join('');
    for (const secret of [
      'supersecret123',
      'abc.def',
      'cookie-secret',
      '904417',
      '774411',
      'hello there',
      'access-secret-9',
    ]) {
      expect(out, secret).not.to.include(secret);
    }
    expect(out).to.include('15551234567');
    const errLine = JSON.parse(chunks.find((c) => c.includes('failed')) ?? '{}');
    expect(errLine.err).to.include({ name: 'Error', message: 'boom' });
    expect(errLine.err.stack).to.be.a('string');
  });

  it('When a line carries a socket close code, an error code and a token id, then they stay readable', async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    const logger = createLogger({ service: 'test', stream });
    const err = Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    logger.warn('socket closed', { code: 428, reason: 'connection_closed', tokenId: 'tok_1', err });
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(chunks.join('')) as Record<string, unknown>;
    expect(line).to.include({ code: 428, reason: 'connection_closed', tokenId: 'tok_1' });
    expect(line.err).to.include({ errorCode: 'ECONNREFUSED' });
  });

  it('When a log line is stamped, then its time is what toISOString writes, to the millisecond', () => {
    const times = [0, 999, 1000, 1_795_480_751_007, 1_795_480_751_099, 1_795_480_751_100, 1_795_480_752_000];
    for (const t of [...times, ...times.reverse()]) expect(isoNow(t)).to.equal(new Date(t).toISOString());
    const before = Date.now();
    const now = Date.parse(isoNow());
    expect(now).to.be.within(before, Date.now());
  });

  it('When a line is written directly (logDirect), then it is the line logger.log writes, redacted alike, and the level is honoured', async () => {
    const lines = async (write: (logger: ReturnType<typeof createLogger>) => void) => {
      const stream = new PassThrough();
      const chunks: string[] = [];
      stream.on('data', (d: Buffer) => chunks.push(d.toString()));
      const logger = createLogger({ service: 'test', stream, level: 'info' });
      write(logger);
      await new Promise((r) => setImmediate(r));
      return chunks
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const { timestamp, ...rest } = JSON.parse(l) as Record<string, unknown>;
          expect(timestamp).to.be.a('string');
          return rest;
        });
    };
    const fields = { requestId: 'r1', method: 'POST', route: '/x', status: 202, token: 'secret-1' };
    const direct = await lines((l) => {
      logDirect(l, 'info', 'request', fields);
      logDirect(l, 'debug', 'request', fields);
    });
    const viaWinston = await lines((l) => {
      l.log('info', 'request', fields);
      l.log('debug', 'request', fields);
    });
    expect(direct).to.deep.equal(viaWinston);
    expect(direct).to.deep.equal([
      {
        level: 'info',
        message: 'request',
        service: 'test',
        requestId: 'r1',
        method: 'POST',
        route: '/x',
        status: 202,
        token: '[REDACTED]',
      },
    ]);
    // An entry of plain values with no secret key (an access line) takes a shortcut: the same line.
    const plain = {
      requestId: 'r2',
      method: 'GET',
      route: '/y?token=abc',
      status: 200,
      durationMs: 1.5,
      ok: true,
    };
    const directPlain = await lines((l) => logDirect(l, 'info', 'request', plain));
    expect(directPlain).to.deep.equal(await lines((l) => l.log('info', 'request', plain)));
    expect(directPlain).to.deep.equal([
      { ...plain, route: '/y?token=[REDACTED]', level: 'info', message: 'request', service: 'test' },
    ]);
  });

  it('When a line holds what plain JSON cannot (a BigInt, a cycle), then it is still one JSON line', async () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d.toString()));
    const logger = createLogger({ service: 'test', stream });
    const cycle: Record<string, unknown> = { name: 'a' };
    cycle.self = cycle;
    logger.info('plain', { requestId: 'r1', status: 202 });
    logger.info('big', { count: 12345678901234567890n });
    logger.info('cyclic', { cycle });
    await new Promise((r) => setImmediate(r));
    const lines = chunks
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.message)).to.deep.equal(['plain', 'big', 'cyclic']);
    expect(lines[0]).to.include({ level: 'info', service: 'test', requestId: 'r1', status: 202 });
    expect(lines[0]!.timestamp).to.be.a('string');
    expect(lines[1]!.count).to.equal('12345678901234567890');
    expect(lines[2]!.cycle).to.deep.equal({ name: 'a', self: '[Circular]' });
  });
});
