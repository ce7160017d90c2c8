import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '@mgw/common';
import {
  ERRORS,
  keys,
  type CheckContactsCommand,
  type DeviceCommandReply,
  MAX_SEND_USERNAME_LOOKUPS,
  USERNAME_ERRORS,
  type UsernameLookup,
  type UsernameLookupCommand,
} from '@mgw/contracts';
import { ContactCache, DeviceCommandResponder, ContactUsernames, PoolStore } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * The contacts capability's route tests, each against the real app and Redis with a stand-in for
 * the sender that holds the device: POST /contacts/check (numbers on WhatsApp), and
 * POST /contacts/username with /send naming usernames.
 */

/**
 * POST /contacts/check against the real app and Redis, with a stand-in for the sender that holds
 * the device: it answers each number ending in 0 as not on WhatsApp, the others as on it (with a
 * LID), writing the cache as the sender does. The whole way through the real client and the
 * simulator is services/sender/test/e2e/number-check.test.ts.
 */
describe('POST /contacts/check', () => {
  const CAP = 5;
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let holder: Redis | undefined;
  let asked: CheckContactsCommand[];
  const failures: unknown[] = [];

  const check = (phones: unknown, tok = token) =>
    call(`${t.api}/contacts/check`, { method: 'POST', token: tok, json: { phones } });

  async function startHolder(failure?: DeviceCommandReply): Promise<void> {
    holder = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    const cache = new ContactCache(t.redis, 3600);
    await new DeviceCommandResponder(holder, t.redis).listen(
      async (cmd, reply) => {
        if (cmd.type !== 'check-contacts' || cmd.deviceId !== deviceId) return;
        asked.push(cmd);
        if (failure) return reply(failure);
        const answers = new Map(
          cmd.phones.map((p) => [
            p,
            p.endsWith('0')
              ? { onWhatsApp: false }
              : { onWhatsApp: true, jid: `${p}@s.whatsapp.net`, lid: `9${p}@lid` },
          ]),
        );
        await cache.putMany(deviceId, answers);
        await reply({ ok: true });
      },
      (err) => failures.push(err),
    );
  }

  before(async () => {
    t = await startApi({ contactCheck: { lookupsPerDay: CAP, batchSize: 2, pauseMs: 10 } });
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    asked = [];
  });
  afterEach(async () => {
    await holder?.quit();
    holder = undefined;
    expect(failures.splice(0), 'the holder failed').to.deep.equal([]);
  });
  after(async () => {
    await t.close();
  });

  it('When numbers are not cached, then the holder looks each up once and the answers come in request order (duplicates answered twice)', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();
    const phones = ['15550100001', '15550100010', '15550100001', '15550100002'];

    const res = await check(phones);

    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({
      success: true,
      data: {
        results: [
          {
            phone: '15550100001',
            onWhatsApp: true,
            lid: '915550100001@lid',
            phoneJid: '15550100001@s.whatsapp.net',
          },
          { phone: '15550100010', onWhatsApp: false },
          {
            phone: '15550100001',
            onWhatsApp: true,
            lid: '915550100001@lid',
            phoneJid: '15550100001@s.whatsapp.net',
          },
          {
            phone: '15550100002',
            onWhatsApp: true,
            lid: '915550100002@lid',
            phoneJid: '15550100002@s.whatsapp.net',
          },
        ],
      },
    });
    expect(asked).to.have.length(1);
    expect(asked[0]).to.include({ batchSize: 2, pauseMs: 10 });
    expect(asked[0]!.phones).to.deep.equal(['15550100001', '15550100010', '15550100002']);
  });

  it('When every number is cached, then the answer comes from the cache without asking the holder', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();
    await check(['15550100003', '15550100020']);
    asked.length = 0;

    const res = await check(['15550100020', '15550100003']);

    expect(res.status).to.equal(200);
    expect((res.body.data as { results: unknown[] }).results).to.deep.equal([
      { phone: '15550100020', onWhatsApp: false },
      {
        phone: '15550100003',
        onWhatsApp: true,
        lid: '915550100003@lid',
        phoneJid: '15550100003@s.whatsapp.net',
      },
    ]);
    expect(asked).to.deep.equal([]);
  });

  it('When the uncached numbers would pass the daily lookup cap, then 429 with resetIn, nothing is asked, and cache hits stay free', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();
    expect((await check(['15550100004', '15550100005', '15550100006'])).status).to.equal(200);

    const over = await check(['15550100004', '15550100007', '15550100008', '15550100009']);
    const cached = await check(['15550100004', '15550100005', '15550100006']);
    const fits = await check(['15550100007', '15550100008']);

    expect(over.status).to.equal(429);
    expect(over.body.success).to.equal(false);
    expect(over.body.error).to.equal(ERRORS.rateLimited);
    expect(over.body.resetIn).to.be.within(24 * 3600 - 5, 24 * 3600);
    expect(cached.status).to.equal(200);
    expect(fits.status).to.equal(200);
    expect(asked.map((c) => c.phones)).to.deep.equal([
      ['15550100004', '15550100005', '15550100006'],
      ['15550100007', '15550100008'],
    ]);
    expect(await t.redis.get(keys.contactLookups(deviceId))).to.equal(String(CAP));
    const counted = Object.fromEntries(
      (await t.services.metrics.contactLookups.get()).values.map((v) => [v.labels.outcome, v.value]),
    );
    expect(counted.capped).to.be.at.least(3);
    expect(counted.looked_up).to.be.at.least(5);
    expect(counted.cache_hit).to.be.at.least(4);
  });

  it('When the body is not 1 to 1,000 valid numbers, then 400 Invalid request data with details', async () => {
    await markConnected(t.redis, deviceId);
    const tooMany = Array.from({ length: 1001 }, (_, i) => `1555020${String(i).padStart(4, '0')}`);
    const cases: [unknown, (string | number)[]][] = [
      [[], ['phones']],
      [tooMany, ['phones']],
      [
        ['15550100001', '+1 555 0100'],
        ['phones', 1],
      ],
      ['15550100001', ['phones']],
    ];
    for (const [phones, path] of cases) {
      const res = await check(phones);
      expect(res.status, JSON.stringify(phones).slice(0, 40)).to.equal(400);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
      const details = res.body.details as { path: (string | number)[]; message: string }[];
      expect(details[0]!.path).to.deep.equal(path);
      expect(details[0]!.message).to.be.a('string').and.not.equal('');
    }
    const missing = await call(`${t.api}/contacts/check`, { method: 'POST', token, json: {} });
    expect(missing.status).to.equal(400);
    expect((missing.body.details as { path: string[] }[])[0]!.path).to.deep.equal(['phones']);
  });

  it('When the device is not connected, or no sender holds it, then 409 like a send', async () => {
    const offline = await check(['15550100001']);
    await markConnected(t.redis, deviceId);
    const unheld = await check(['15550100001']);

    for (const res of [offline, unheld]) {
      expect(res.status).to.equal(409);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.noDevice });
    }
  });

  it('When the holder cannot look the numbers up, then 502 and nothing is cached', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder({ ok: false, error: 'lookup failed' });

    const res = await check(['15550100001']);

    expect(res.status).to.equal(502);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.contactLookupFailed });
    expect(await t.redis.get(keys.contact(deviceId, '15550100001'))).to.equal(null);
  });
});

/** What the stand-in holder's WhatsApp knows: username -> LID digits, and the PIN guarding it. */
const DIRECTORY: Record<string, { lid: string; phone?: string; pin?: string }> = {
  'alice.shop': { lid: '100000000000001', phone: '15550120001' },
  vault_42: { lid: '100000000000002', pin: '0420' },
  'quiet.one': { lid: '100000000000003' },
};

/**
 * POST /contacts/username and /send to `@username` against the real app and Redis, with a
 * stand-in for the sender holding the device: it answers each lookup from DIRECTORY and keeps a
 * found username in the device's map, as the sender does (commands/username-lookups.ts). The whole
 * way through the real client and the simulator is services/sender/test/e2e/usernames.test.ts.
 */
describe('POST /contacts/username, and /send naming usernames', () => {
  const CAP = 20;
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let holder: Redis | undefined;
  let asked: UsernameLookupCommand[];
  const failures: unknown[] = [];

  const resolve = (json: unknown, tok = token, path = '/contacts/username') =>
    call(`${t.api}${path}`, { method: 'POST', token: tok, json });
  const send = (json: unknown, tok = token) => call(`${t.api}/send`, { method: 'POST', token: tok, json });

  async function startHolder(failure?: DeviceCommandReply): Promise<void> {
    holder = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    const usernames = new ContactUsernames(t.redis);
    await new DeviceCommandResponder(holder, t.redis).listen(
      async (cmd, reply) => {
        if (cmd.type !== 'account-usernames-resolve' || cmd.deviceId !== deviceId) return;
        asked.push(cmd);
        if (failure) return reply(failure);
        const answers: UsernameLookup[] = cmd.lookups.map(({ username, pin }) => {
          const known = DIRECTORY[username];
          if (!known) return { username, status: 'not_found' };
          if (known.pin && known.pin !== pin) return { username, status: 'pin_required' };
          return {
            username,
            status: 'found',
            lid: `${known.lid}@lid`,
            ...(known.phone ? { phone: known.phone } : {}),
          };
        });
        const found = answers.filter((a) => a.status === 'found');
        await usernames.keep(
          cmd.deviceId,
          found.map((a) => ({ username: a.username, lid: a.lid! })),
        );
        await reply({ ok: true, data: { usernames: answers } });
      },
      (err) => failures.push(err),
    );
  }

  before(async () => {
    t = await startApi({
      contactCheck: { lookupsPerDay: CAP, batchSize: 2, pauseMs: 10 },
      rateLimits: { contacts: 1000, send: 1000 },
    });
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    asked = [];
  });
  afterEach(async () => {
    await holder?.quit();
    holder = undefined;
    expect(failures.splice(0), 'the holder failed').to.deep.equal([]);
  });
  after(async () => {
    await t.close();
  });

  it('When usernames are resolved, then found, pin_required and not_found come back as WhatsApp said, the username as WhatsApp knows it and the PIN passed on', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();

    const found = await resolve({ username: '@Alice.Shop' });
    const guarded = await resolve({ username: 'vault_42' });
    const wrong = await resolve({ username: 'vault_42', pin: '1111' });
    const unlocked = await resolve({ username: 'vault_42', pin: '0420' });
    const unknown = await resolve({ username: 'nobody.here' });

    expect(found.status, JSON.stringify(found.body)).to.equal(200);
    expect(found.body).to.deep.equal({
      success: true,
      data: {
        username: 'alice.shop',
        status: 'found',
        contact: { phone: '15550120001', lid: '100000000000001@lid', username: 'alice.shop' },
      },
    });
    expect(guarded.body.data).to.deep.equal({ username: 'vault_42', status: 'pin_required' });
    expect(wrong.body.data).to.deep.equal({ username: 'vault_42', status: 'pin_required' });
    expect(unlocked.body.data).to.deep.equal({
      username: 'vault_42',
      status: 'found',
      contact: { lid: '100000000000002@lid', username: 'vault_42' },
    });
    expect(unknown.body).to.deep.equal({
      success: true,
      data: { username: 'nobody.here', status: 'not_found' },
    });
    expect(asked.map((c) => c.lookups)).to.deep.equal([
      [{ username: 'alice.shop' }],
      [{ username: 'vault_42' }],
      [{ username: 'vault_42', pin: '1111' }],
      [{ username: 'vault_42', pin: '0420' }],
      [{ username: 'nobody.here' }],
    ]);
    expect(await t.redis.get(keys.contactLookups(deviceId))).to.equal('5');
  });

  it('When the body breaks a rule, then 400 names the field and the rule, and nothing is asked', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();
    const cases: [unknown, string[], RegExp][] = [
      [{ username: 'ab' }, ['username'], /\(rule: invalid_length\)$/],
      [{ username: 'alice.com' }, ['username'], /\(rule: domain_suffix\)$/],
      [{ username: 'my_whatsapp' }, ['username'], /\(rule: reserved_word\)$/],
      [{ username: 'al ice' }, ['username'], /\(rule: invalid_character\)$/],
      [{ username: '\ud800abc' }, ['username'], /./],
      [{ username: 'x'.repeat(500) }, ['username'], /\(rule: invalid_length\)$/],
      [{ username: 'alice', pin: '42' }, ['pin'], /exactly 4 digits/],
      [{ username: 'alice', pin: 4242 }, ['pin'], /./],
      [{ username: 'alice', extra: true }, ['extra'], /./],
      [{}, ['username'], /./],
    ];
    for (const [body, path, message] of cases) {
      const res = await resolve(body);
      expect(res.status, JSON.stringify(body).slice(0, 40)).to.equal(400);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
      const details = res.body.details as { path: string[]; message: string }[];
      expect(details[0]!.path).to.deep.equal(path);
      expect(details[0]!.message).to.match(message);
    }
    const query = await call(`${t.api}/contacts/username?x=1`, {
      method: 'POST',
      token,
      json: { username: 'alice' },
    });
    expect(query.status).to.equal(400);
    const huge = await resolve({ username: 'x'.repeat(10_000) });
    expect(huge.status).to.equal(413);
    expect(huge.body).to.deep.equal({ success: false, error: USERNAME_ERRORS.bodyTooLarge });
    expect(asked).to.deep.equal([]);
  });

  it('When the device is not connected or nobody holds it, then 409; when the lookup fails, 502; over the daily cap, 429 with resetIn', async () => {
    expect((await resolve({ username: 'alice.shop' })).body).to.deep.equal({
      success: false,
      error: ERRORS.noDevice,
    });
    await markConnected(t.redis, deviceId);
    const unheld = await resolve({ username: 'alice.shop' });
    expect(unheld.status).to.equal(409);
    await startHolder({ ok: false, error: 'failed' });
    const failed = await resolve({ username: 'alice.shop' });
    expect(failed.status).to.equal(502);
    expect(failed.body).to.deep.equal({ success: false, error: USERNAME_ERRORS.lookupFailed });
    await t.redis.set(keys.contactLookups(deviceId), String(CAP), 'EX', 3600);
    const capped = await resolve({ username: 'alice.shop' });
    expect(capped.status).to.equal(429);
    expect(capped.body).to.include({ success: false, error: ERRORS.rateLimited });
    expect(capped.body.resetIn).to.be.within(1, 3600);
  });

  it('When /send names a resolved username, then it is accepted to its LID with no lookup; an unresolved unguarded one is asked first; an unknown or guarded one is 422 and nothing is queued', async () => {
    await markConnected(t.redis, deviceId);
    await startHolder();
    await resolve({ username: 'vault_42', pin: '0420' });
    asked.length = 0;

    const single = await send({ to: '@VAULT_42', text: 'hi' });
    expect(single.status, JSON.stringify(single.body)).to.equal(202);
    const rec = await call(`${t.api}/messages/${String(single.body.messageId)}`, { token });
    expect(rec.body.data).to.deep.include({
      to: '100000000000002@lid',
      contact: { lid: '100000000000002@lid', username: 'vault_42' },
    });
    expect(asked).to.deep.equal([]);

    const list = await send({ to: ['@vault_42', '@alice.shop', '15550120009'], text: 'hi all' });
    expect(list.status, JSON.stringify(list.body)).to.equal(202);
    expect(asked.map((c) => c.lookups)).to.deep.equal([[{ username: 'alice.shop' }]]);
    const ids = list.body.messageIds as string[];
    const tos = await Promise.all(
      ids.map(
        async (id) => ((await call(`${t.api}/messages/${id}`, { token })).body.data as { to: string }).to,
      ),
    );
    expect(tos).to.deep.equal(['100000000000002@lid', '100000000000001@lid', '15550120009']);

    const queued = await t.redis.zcard(keys.messageIndex(deviceId));
    const refused = await send({ to: ['@quiet.one', '@nobody.here'], text: 'x' });
    expect(refused.status).to.equal(422);
    expect(refused.body).to.deep.equal({
      success: false,
      error: USERNAME_ERRORS.notFound,
      details: [{ path: ['to', 1], message: '@nobody.here: username_not_found' }],
    });
    await t.redis.del(keys.contactIdentities(deviceId));
    const guarded = await send({ to: '@vault_42', text: 'x' });
    expect(guarded.status).to.equal(422);
    expect(guarded.body).to.deep.equal({
      success: false,
      error: USERNAME_ERRORS.pinRequired,
      details: [
        {
          path: ['to'],
          message: '@vault_42: username_pin_required (resolve it with its PIN: POST /contacts/username)',
        },
      ],
    });
    expect(await t.redis.zcard(keys.messageIndex(deviceId)), 'nothing queued').to.equal(queued);

    const many = Array.from({ length: MAX_SEND_USERNAME_LOOKUPS + 1 }, (_, i) => `@user_${i}`);
    const tooMany = await send({ to: many, text: 'x' });
    expect(tooMany.status).to.equal(400);
    expect((tooMany.body.details as { path: string[] }[])[0]!.path).to.deep.equal(['to']);
    const bad = await send({ to: '@www.shop', text: 'x' });
    expect(bad.status).to.equal(400);
    expect((bad.body.details as { message: string }[])[0]!.message).to.match(/\(rule: www_prefix\)$/);
  });

  it('When a pool token resolves a username or sends to one, then 403 and 400: a username is one device’s', async () => {
    const poolId = `p${Math.random().toString(36).slice(2, 9)}`;
    await new PoolStore(t.redis).create({ id: poolId, name: 'usernames pool', devices: [deviceId] });
    const { value: poolToken } = await t.services.tokens.create({ name: 'pool', poolId });
    const res = await resolve({ username: 'alice.shop' }, poolToken);
    expect(res.status).to.equal(403);
    const sent = await send({ to: ['15550120009', '@alice.shop'], text: 'x' }, poolToken);
    expect(sent.status).to.equal(400);
    expect(sent.body.details).to.deep.equal([{ path: ['to', 1], message: USERNAME_ERRORS.throughPool }]);
  });
});
