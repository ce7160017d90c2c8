import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { startRedisServer, type RedisServerHandle } from '@mgw/testing';
import { Encryption, EncryptionKey, parseKeyLine, storageContext } from '@mgw/store';
import { runApiCli } from './helpers/cli.js';

/** Runs the CLI the way `npm run -s keys --` does, with exactly the environment given. */
const cli = (env: Record<string, string>, ...args: string[]) =>
  runApiCli('encryption', args, { PATH: process.env.PATH!, LOG_LEVEL: 'silent', ...env });

/** A key line made in-process (the CLI's own generate has its test). */
const newKey = (id: string) => new EncryptionKey(id, randomBytes(32)).toLine();

/** The row of a family in a printed table, split into its columns. */
const row = (out: string, family: string) =>
  out
    .split('\n')
    .find((l) => l.startsWith(family + ' '))!
    .split(/\s{2,}/);

describe('encryption key CLI (generate, status, reencrypt) against its own Redis', function () {
  this.timeout(60_000);
  let server: RedisServerHandle;
  let redis: Redis;
  before(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  after(async () => {
    await redis.quit();
    await server.stop();
  });

  it('When a key is generated, then one line <id>:<base64 of 32 bytes> is printed, fresh each time, with the id asked for', async () => {
    const a = await cli({}, 'generate');
    const b = await cli({}, 'generate', '--id', 'prod-2');
    expect([a.code, b.code]).to.deep.equal([0, 0]);
    expect(a.stdout).to.match(/^k\d{8}-[0-9a-f]{4}:[A-Za-z0-9+/]{43}=\n$/);
    expect(b.stdout.startsWith('prod-2:')).to.equal(true);
    expect(parseKeyLine(a.stdout.trim()).bytes).to.have.length(32);
    expect(parseKeyLine(a.stdout.trim()).bytes.equals(parseKeyLine(b.stdout.trim()).bytes)).to.equal(false);
    const bad = await cli({}, 'generate', '--id', 'has:colon');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/--id must be 1-16 characters/);
  });

  it('When the key is missing, then status refuses with how to generate one', async () => {
    const r = await cli({ REDIS_URL: server.url }, 'status');
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/MGW_ENCRYPTION_KEY is required.*npm run -s keys -- generate/);
  });

  it('When the key is rotated, then status shows old-key and plaintext values, reencrypt converts them, and afterwards the new key alone opens everything', async () => {
    const k1 = newKey('k1');
    const k2 = newKey('k2');
    const before = Encryption.fromEnv({ MGW_ENCRYPTION_KEY: k1 });
    const creds = keys.authCreds('cli-1');
    const sessions = keys.authKeys('cli-1', 'session');
    const idem = keys.idempotency('ab'.repeat(32), 'otp-1');
    await redis.set(creds, before.sealText('{"creds":1}', storageContext(creds)));
    await redis.hset(sessions, 'a.0', before.sealText('"s1"', storageContext(sessions, 'a.0')));
    await redis.hset(sessions, 'b.0', '"legacy"');
    await redis.set(idem, '{"state":"done","body":{"code":"123456"}}', 'EX', 3600);

    const rotated = { REDIS_URL: server.url, MGW_ENCRYPTION_KEY: k2, MGW_ENCRYPTION_OLD_KEYS: k1 };
    const status = await cli(rotated, 'status');
    expect(status.code, status.stderr).to.equal(0);
    expect(row(status.stdout, 'auth-creds')).to.deep.equal(['auth-creds', '0', 'k1=1', '-', '0', '0']);
    expect(row(status.stdout, 'auth-keys')).to.deep.equal(['auth-keys', '0', 'k1=1', '-', '1', '0']);
    expect(row(status.stdout, 'idempotency')).to.deep.equal(['idempotency', '0', '-', '-', '1', '0']);
    expect(status.stdout).to.include('4 value(s) to re-encrypt');

    const re = await cli(rotated, 'reencrypt');
    expect(re.code, re.stderr).to.equal(0);
    expect(row(re.stdout, 'auth-keys')).to.deep.equal(['auth-keys', '2', '0', '0', '0']);
    expect(row(re.stdout, 'idempotency')).to.deep.equal(['idempotency', '1', '0', '0', '0']);

    const after = await cli(rotated, 'status');
    expect(after.stdout).to.include('Every value is under the current key: old keys may be dropped.');
    expect(row(after.stdout, 'auth-keys')).to.deep.equal(['auth-keys', '2', '-', '-', '0', '0']);
    expect(await redis.get(idem)).not.to.include('123456');
    expect(await redis.ttl(idem)).to.be.within(3500, 3600);

    const onlyK2 = Encryption.fromEnv({ MGW_ENCRYPTION_KEY: k2 });
    expect(onlyK2.openText((await redis.get(creds))!, storageContext(creds))).to.equal('{"creds":1}');
    expect(onlyK2.openText((await redis.hget(sessions, 'b.0'))!, storageContext(sessions, 'b.0'))).to.equal(
      '"legacy"',
    );
  });

  it('When a value is under a key nobody configured, then status names it and reencrypt exits 1 leaving it alone', async () => {
    const lost = newKey('lost');
    const current = newKey('now');
    const creds = keys.authCreds('cli-2');
    const sealed = Encryption.fromEnv({ MGW_ENCRYPTION_KEY: lost }).sealText('{}', storageContext(creds));
    await redis.set(creds, sealed);
    const env = { REDIS_URL: server.url, MGW_ENCRYPTION_KEY: current };
    const status = await cli(env, 'status');
    expect(row(status.stdout, 'auth-creds')[3]).to.include('lost=1');
    expect(status.stdout).to.match(/value\(s\) no configured key can open/);
    const re = await cli(env, 'reencrypt');
    expect(re.code).to.equal(1);
    expect(re.stdout).to.include('Not re-encrypted:');
    expect(re.stdout).to.match(/ {2}auth-creds: sealed value under key "lost"/);
    expect(await redis.get(creds)).to.equal(sealed);
  });
});
