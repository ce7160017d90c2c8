import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { ContactIdentities, lidDigits, phoneDigits } from '../src/index.js';

describe("store: a device's phone <-> LID map (real Redis)", () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  });
  after(async () => {
    await redis.quit();
  });
  const newDevice = () => `ids-${Math.random().toString(36).slice(2, 8)}`;

  it('When pairs and a LID alone are learnt, then each resolves both ways from any address form, a later phone fills in a LID met alone, and other devices see nothing', async () => {
    const map = new ContactIdentities(redis);
    const deviceId = newDevice();
    expect(
      await map.learn(deviceId, [
        { phone: '15551230001', lid: '111222333444555@lid' },
        { lid: '999888777666555@lid' },
        { phone: '15551230002' }, // nothing to keep
        { phone: 'not a phone', lid: 'not a lid' },
      ]),
    ).to.equal(0);
    expect(
      await map.resolveMany(deviceId, [
        '15551230001',
        '15551230001:3@s.whatsapp.net',
        '111222333444555@lid',
        '111222333444555:7@lid',
        '999888777666555@lid',
        '15551230002',
        'group@g.us',
      ]),
    ).to.deep.equal([
      { phone: '15551230001', lid: '111222333444555@lid' },
      { phone: '15551230001', lid: '111222333444555@lid' },
      { phone: '15551230001', lid: '111222333444555@lid' },
      { phone: '15551230001', lid: '111222333444555@lid' },
      { lid: '999888777666555@lid' },
      { phone: '15551230002' },
      {},
    ]);
    expect(await map.knowsLid(deviceId, '999888777666555@lid')).to.equal(true);
    expect(await map.knowsLid(deviceId, '123@lid')).to.equal(false);
    expect(await map.knowsLid(newDevice(), '999888777666555@lid')).to.equal(false);

    await map.learn(deviceId, [{ phone: '15551230003', lid: '999888777666555@lid' }]);
    expect(await map.resolve(deviceId, '999888777666555@lid')).to.deep.equal({
      phone: '15551230003',
      lid: '999888777666555@lid',
    });
    // A LID met alone again does not forget the phone learnt meanwhile.
    await map.learn(deviceId, [{ lid: '999888777666555@lid' }]);
    expect((await map.resolve(deviceId, '999888777666555@lid')).phone).to.equal('15551230003');
    await redis.del(keys.contactIdentities(deviceId));
  });

  it('When the map is full, then new pairs stop at 90 % (the rest is kept for LIDs met alone), what does not fit is counted, and known ones still update', async () => {
    const map = new ContactIdentities(redis, 20);
    const deviceId = newDevice();
    const pairs = Array.from({ length: 10 }, (_, i) => ({
      phone: `155512300${10 + i}`,
      lid: `${100 + i}@lid`,
    }));
    expect(await map.learn(deviceId, pairs)).to.equal(1);
    expect(await redis.hlen(keys.contactIdentities(deviceId))).to.equal(18);
    expect(await map.learn(deviceId, [{ lid: '201@lid' }, { lid: '202@lid' }, { lid: '203@lid' }])).to.equal(
      1,
    );
    expect(await map.knowsLid(deviceId, '202@lid')).to.equal(true);
    expect(await map.knowsLid(deviceId, '203@lid')).to.equal(false);
    expect(await map.learn(deviceId, [{ phone: '15551230010', lid: '105@lid' }])).to.equal(0);
    expect(await map.resolve(deviceId, '15551230010')).to.deep.equal({
      phone: '15551230010',
      lid: '105@lid',
    });
    await redis.del(keys.contactIdentities(deviceId));
  });

  it('When addresses are parsed, then only phone digits and LIDs (with or without a device) are taken', () => {
    expect(lidDigits('123@lid')).to.equal('123');
    expect(lidDigits('123:4@lid')).to.equal('123');
    expect(lidDigits('0123@lid')).to.equal(undefined);
    expect(lidDigits('123@s.whatsapp.net')).to.equal(undefined);
    expect(phoneDigits('15551230001')).to.equal('15551230001');
    expect(phoneDigits('15551230001:2@s.whatsapp.net')).to.equal('15551230001');
    expect(phoneDigits('123')).to.equal(undefined);
    expect(phoneDigits('15551230001@lid')).to.equal(undefined);
  });
});
