import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '@mgw/common';
import { ACCOUNT_ERRORS, ERRORS, keys, type AccountCommand, type DeviceCommandReply } from '@mgw/contracts';
import { Blocklist, ContactIdentities, DeviceCommandResponder } from '@mgw/store';
import { RedisMonitor, waitFor } from '@mgw/testing';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
  createPoolToken,
} from '../../../../test/helpers/api.js';

/**
 * The account routes against the real app and Redis: validation naming the field, the device's
 * state, tokens (device-scoped, pool), what the holder's reply becomes, the blocklist read from
 * Redis and a blocked recipient refused before anything is queued (every answer is checked against
 * the OpenAPI document by `call`). The holder here is a stand-in answering account commands as the
 * sender's account-commands.ts does; the whole way through the real client and the simulator is
 * account-stack.test.ts beside this file.
 */
describe('Account routes (/profile, /presence, /contacts/:number/…, /blocklist)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let holder: Redis | undefined;
  const asked: AccountCommand[] = [];

  before(async () => {
    t = await startApi({ rateLimits: { status: 1000, account: 1000 } });
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    asked.length = 0;
  });
  afterEach(async () => {
    await holder?.quit();
    holder = undefined;
  });
  after(() => t.close());

  const api = (path: string, opts: Parameters<typeof call>[1] = {}) =>
    call(`${t.api}${path}`, { token, ...opts });

  async function startHolder(answer: (c: AccountCommand) => DeviceCommandReply): Promise<void> {
    holder = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    await new DeviceCommandResponder(holder, t.redis).listen(
      async (cmd, reply) => {
        if (!cmd.type.startsWith('account-') || cmd.deviceId !== deviceId) return;
        asked.push(cmd as AccountCommand);
        await reply(answer(cmd as AccountCommand));
      },
      () => undefined,
    );
  }

  it('When bodies or numbers are invalid, then 400 names the field and nothing is asked of the device', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder(() => ({ ok: true }));
    const cases: [string, Parameters<typeof call>[1], string[]][] = [
      ['/profile', { method: 'PATCH', json: {} }, []],
      ['/profile', { method: 'PATCH', json: { name: 'x'.repeat(26) } }, ['name']],
      ['/profile', { method: 'PATCH', json: { about: 'x'.repeat(140) } }, ['about']],
      ['/profile', { method: 'PATCH', json: { name: 'A', extra: 1 } }, ['extra']],
      ['/profile/photo', { method: 'PUT', json: { url: 'ftp://example.com/a.png' } }, ['url']],
      ['/profile/photo', { method: 'PUT', json: { base64: 'not base64!' } }, ['base64']],
      [
        '/profile/photo',
        { method: 'PUT', json: { base64: Buffer.from('GIF89a…').toString('base64') } },
        ['base64'],
      ],
      ['/presence', { method: 'PUT', json: { presence: 'busy' } }, ['presence']],
      ['/contacts/12ab/profile', {}, ['number']],
      ['/contacts/123@lid/presence', { method: 'POST' }, ['number']],
      ['/blocklist', { method: 'POST', json: { phone: '+1 555' } }, ['phone']],
      ['/blocklist/abc', { method: 'DELETE' }, ['number']],
    ];
    for (const [path, opts, field] of cases) {
      const res = await api(path, opts);
      expect(res.status, `${path} ${JSON.stringify(opts)}`).to.equal(400);
      const details = res.body.details as { path: string[] }[];
      if (field.length) expect(details[0]!.path, path).to.deep.equal(field);
    }
    expect(asked).to.deep.equal([]);
  });

  it('When the device is not connected, or a pool token asks, then 409 and 403', async () => {
    for (const [path, opts] of [
      ['/profile', {}],
      ['/contacts/15551234567/profile', {}],
      ['/blocklist', {}],
      ['/presence', { method: 'PUT', json: { presence: 'available' } }],
    ] as const) {
      const res = await api(path, opts);
      expect(res.status, path).to.equal(409);
      expect(res.body.error).to.equal(ERRORS.noDevice);
    }
    const poolToken = await createPoolToken(t, 'p-account');
    for (const path of ['/profile', '/blocklist', '/contacts/15551234567/profile']) {
      const res = await call(`${t.api}${path}`, { token: poolToken });
      expect(res.status, path).to.equal(403);
      expect(res.body.error).to.equal(ERRORS.poolTokenNotAllowed);
    }
    expect((await api('/profile', { method: 'POST', json: {} })).status).to.equal(405);
  });

  it("When the holder answers, then each reply becomes the documented answer; the token's device is the one asked", async () => {
    await markConnected(t.redis, deviceId);
    await startHolder((c) => {
      if (c.type === 'account-profile-get')
        return { ok: true, data: { profile: { phone: '15550001111', name: 'Shop' } } };
      if (c.type === 'account-contact-profile') return { ok: false, error: 'not-found' };
      if (c.type === 'account-presence-set') return { ok: false, error: 'no-name' };
      if (c.type === 'account-photo-set') return { ok: false, error: 'photo-unreachable' };
      return { ok: false, error: 'failed' };
    });
    const profile = await api('/profile');
    expect(profile.body).to.deep.equal({
      success: true,
      data: { profile: { phone: '15550001111', name: 'Shop' } },
    });
    const missing = await api('/contacts/15551234567/profile');
    expect(missing.status).to.equal(404);
    expect(missing.body.error).to.equal(ACCOUNT_ERRORS.contactNotFound);
    const nameless = await api('/presence', { method: 'PUT', json: { presence: 'available' } });
    expect(nameless.status).to.equal(409);
    expect(nameless.body.error).to.equal(ACCOUNT_ERRORS.presenceNeedsName);
    const unreachable = await api('/profile/photo', {
      method: 'PUT',
      json: { url: 'https://example.com/a.png' },
    });
    expect(unreachable.status).to.equal(422);
    const failed = await api('/blocklist', { method: 'POST', json: { phone: '15551234567' } });
    expect(failed.status).to.equal(502);
    expect(failed.body.error).to.equal(ACCOUNT_ERRORS.failed);
    expect(asked.every((c) => c.deviceId === deviceId)).to.equal(true);
    expect(asked.map((c) => c.type)).to.deep.equal([
      'account-profile-get',
      'account-contact-profile',
      'account-presence-set',
      'account-photo-set',
      'account-block',
    ]);
  });

  it('When a base64 photo is sent, then the holder gets it sealed by reference, and the key is gone after', async () => {
    await markConnected(t.redis, deviceId);
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64, 7)]);
    await startHolder(() => ({
      ok: true,
      data: { profile: { phone: '15550001111', pictureUrl: 'https://x.test/p.jpg' } },
    }));
    const res = await api('/profile/photo', { method: 'PUT', json: { base64: png.toString('base64') } });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const cmd = asked[0] as Extract<AccountCommand, { type: 'account-photo-set' }>;
    expect(cmd.source).to.deep.equal({ stored: true });
    expect(
      await t.redis.exists(keys.profilePhoto(deviceId, cmd.requestId)),
      'deleted once answered',
    ).to.equal(0);
    const big = await api('/profile/photo', {
      method: 'PUT',
      json: { base64: Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024)]).toString('base64') },
    });
    expect(big.status).to.equal(413);
    expect(big.body.error).to.equal(ACCOUNT_ERRORS.photoTooLarge);
  });

  it('When a number is on the blocklist, then a single send to it is 422 before anything is queued and a list is accepted', async () => {
    await markConnected(t.redis, deviceId);
    await new ContactIdentities(t.redis).learn(deviceId, [{ phone: '15557654321', lid: '998877665544@lid' }]);
    await new Blocklist(t.redis).replace(deviceId, ['998877665544@lid']);
    const list = await api('/blocklist');
    expect(list.body).to.deep.equal({
      success: true,
      data: { total: 1, contacts: [{ phone: '15557654321', lid: '998877665544@lid' }] },
    });
    const queued = await t.redis.zcard(keys.messageIndex(deviceId));
    const single = await api('/send', { json: { to: '15557654321', text: 'hi' } });
    expect(single.status).to.equal(422);
    expect(single.body).to.deep.equal({
      success: false,
      error: ACCOUNT_ERRORS.recipientBlocked,
      details: [{ path: ['to'], message: "15557654321 is on this account's blocklist" }],
    });
    expect(await t.redis.zcard(keys.messageIndex(deviceId)), 'nothing queued').to.equal(queued);
    const otp = await api('/otp', { json: { phone: '15557654321', code: '1234', language: 'English' } });
    expect(otp.status).to.equal(422);
    const many = await api('/send', { json: { to: ['15557654321', '15551112222'], text: 'hi' } });
    expect(many.status, 'a list: each blocked recipient fails on its own').to.equal(202);
  });

  it('When GET /blocklist and GET /status are served, then the blocklist costs no more Redis commands than the status', async () => {
    await markConnected(t.redis, deviceId);
    await new Blocklist(t.redis).replace(deviceId, ['998877665544@lid', '15551230000']);
    const count = async (path: string) => {
      const seen: string[][] = [];
      const monitor = await RedisMonitor.start(t.config.redis.url, (args) => seen.push(args));
      await api(path);
      // Every command of the request is seen once one sent after it is: MONITOR shows them in the
      // order Redis ran them (a sleep could end before a loaded host's monitor caught up).
      const marker = `monitor-marker-${Math.random().toString(36).slice(2)}`;
      await t.redis.echo(marker);
      await waitFor(() => seen.some((a) => a.includes(marker)), { intervalMs: 10, what: 'the marker seen' });
      monitor.close();
      // Only this request's commands: those naming this device's keys or its token.
      return seen.filter((a) => a.some((x) => x.includes(deviceId))).length;
    };
    const status = await count('/status');
    const blocklist = await count('/blocklist');
    console.log(
      `      Redis commands on this device's keys: GET /status ${status}, GET /blocklist ${blocklist}`,
    );
    expect(blocklist).to.be.at.most(status);
    // The time each takes, sequentially (printed for the record; the machine's load varies).
    const median = async (path: string) => {
      const took: number[] = [];
      for (let i = 0; i < 100; i++) {
        const started = performance.now();
        await fetch(`${t.api}${path}`, { headers: { authorization: `Bearer ${token}` } });
        took.push(performance.now() - started);
      }
      return took.sort((a, b) => a - b)[50]!.toFixed(2);
    };
    console.log(
      `      median of 100: GET /status ${await median('/status')} ms, GET /blocklist ${await median('/blocklist')} ms`,
    );
  });
});
