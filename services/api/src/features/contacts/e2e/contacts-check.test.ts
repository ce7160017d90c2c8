import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '@mgw/common';
import { ERRORS, keys, type CheckContactsCommand, type DeviceCommandReply } from '@mgw/contracts';
import { ContactCache, DeviceCommandResponder } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

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
