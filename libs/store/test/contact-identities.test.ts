import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { ContactCache, ContactIdentities, lidDigits, phoneDigits } from '../src/index.js';

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

  it('When a LID comes with another phone or a phone with another LID, then the contradicted entry goes (whatsmeow 563bcaa0): the old number no longer names the LID, the old LID stays known without the phone', async () => {
    const map = new ContactIdentities(redis);
    const deviceId = newDevice();
    await map.learn(deviceId, [
      { phone: '15551230001', lid: '111@lid' },
      { phone: '15551230002', lid: '222@lid' },
    ]);
    // The contact of LID 111 changed its number: 15551230001 may be someone else's now.
    await map.learn(deviceId, [{ phone: '15551230009', lid: '111@lid' }]);
    expect(await map.resolveMany(deviceId, ['111@lid', '15551230009', '15551230001'])).to.deep.equal([
      { phone: '15551230009', lid: '111@lid' },
      { phone: '15551230009', lid: '111@lid' },
      { phone: '15551230001' },
    ]);
    // 15551230002 was registered again (a new account, a new LID): the old LID no longer names it.
    await map.learn(deviceId, [{ phone: '15551230002', lid: '333@lid' }]);
    expect(await map.resolveMany(deviceId, ['15551230002', '333@lid', '222@lid'])).to.deep.equal([
      { phone: '15551230002', lid: '333@lid' },
      { phone: '15551230002', lid: '333@lid' },
      { lid: '222@lid' },
    ]);
    expect(await map.knowsLid(deviceId, '222@lid'), 'the old account may still write').to.equal(true);
    expect(await redis.hgetall(keys.contactIdentities(deviceId))).to.deep.equal({
      'p:15551230009': '111',
      'l:111': '15551230009',
      'p:15551230002': '333',
      'l:333': '15551230002',
      'l:222': '',
    });
    await redis.del(keys.contactIdentities(deviceId));
  });

  it('When a pair is replaced, then the number-check answers naming the old LID are dropped, and an answer already naming the new one stays', async () => {
    const map = new ContactIdentities(redis);
    const cache = new ContactCache(redis, 600);
    const deviceId = newDevice();
    const answer = (phone: string, lid: string) => ({
      onWhatsApp: true,
      jid: `${phone}@s.whatsapp.net`,
      lid,
    });
    await map.learn(deviceId, [
      { phone: '15551230001', lid: '111@lid' },
      { phone: '15551230002', lid: '222@lid' },
      { phone: '15551230004', lid: '444@lid' },
    ]);
    await cache.putMany(
      deviceId,
      new Map([
        ['15551230001', answer('15551230001', '111@lid')],
        ['15551230002', answer('15551230002', '222@lid')],
        ['15551230004', answer('15551230004', '555@lid')], // the lookup that taught the new LID
      ]),
    );
    await map.learn(deviceId, [
      { phone: '15551230009', lid: '111@lid' }, // 111 changed its number
      { phone: '15551230002', lid: '333@lid' }, // 15551230002 registered again
      { phone: '15551230004', lid: '555@lid' },
    ]);
    const left = await cache.getMany(deviceId, ['15551230001', '15551230002', '15551230004']);
    expect([...left.keys()]).to.deep.equal(['15551230004']);
    await redis.del(keys.contactIdentities(deviceId), keys.contact(deviceId, '15551230004'));
  });

  it('When the map is full, then a known LID still takes its new phone (it adds no field)', async () => {
    const map = new ContactIdentities(redis, 4);
    const deviceId = newDevice();
    await map.learn(deviceId, [
      { phone: '15551230001', lid: '111@lid' },
      { phone: '15551230002', lid: '222@lid' },
    ]);
    expect(await map.learn(deviceId, [{ phone: '15551230003', lid: '333@lid' }])).to.equal(1);
    expect(await map.learn(deviceId, [{ phone: '15551230009', lid: '111@lid' }])).to.equal(0);
    expect(await map.resolve(deviceId, '111@lid')).to.deep.equal({ phone: '15551230009', lid: '111@lid' });
    expect(await redis.hlen(keys.contactIdentities(deviceId))).to.equal(4);
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
