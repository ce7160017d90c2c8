import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { ContactIdentities, isOptedOut, listOptOuts, optIn, optOut } from '../src/index.js';

describe('store: an opt-out covers both identities of a contact the device knows by phone and LID (real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  });
  after(async () => {
    await redis.quit();
  });
  const newDevice = () => `optid-${Math.random().toString(36).slice(2, 8)}`;
  const phone = '15551240001';
  const lid = '123456789012345@lid';

  it('When a contact opts out by its LID, then its phone is refused too; a second opt-out by the phone changes nothing; an opt-in by the phone removes the LID entry', async () => {
    const deviceId = newDevice();
    await new ContactIdentities(redis).learn(deviceId, [{ phone, lid }]);
    expect(await optOut(redis, deviceId, lid, 'keyword')).to.equal(true);
    expect(await isOptedOut(redis, deviceId, phone)).to.equal(true);
    expect(await isOptedOut(redis, deviceId, lid)).to.equal(true);
    expect(await optOut(redis, deviceId, phone, 'admin'), 'already on by its LID').to.equal(false);
    const page = await listOptOuts(redis, deviceId, { limit: 10 });
    expect(page.total).to.equal(1);
    expect(page.numbers.map((n) => [n.phone, n.contact])).to.deep.equal([[lid, { phone, lid }]]);
    expect(await optIn(redis, deviceId, phone, 'admin')).to.equal(true);
    expect(await isOptedOut(redis, deviceId, lid)).to.equal(false);
    expect(await redis.zcard(keys.optOuts(deviceId))).to.equal(0);
    expect(await optIn(redis, deviceId, lid, 'admin'), 'nothing left to remove').to.equal(false);
  });

  it('When a phone opted out before the device learnt its LID, then once the pair is known a send to the LID is refused; a stranger LID and another phone are not', async () => {
    const deviceId = newDevice();
    expect(await optOut(redis, deviceId, phone, 'keyword')).to.equal(true);
    expect(await isOptedOut(redis, deviceId, lid), 'pair not known yet').to.equal(false);
    await new ContactIdentities(redis).learn(deviceId, [{ phone, lid }, { lid: '999999999999999@lid' }]);
    expect(await isOptedOut(redis, deviceId, lid)).to.equal(true);
    expect(await isOptedOut(redis, deviceId, '999999999999999@lid')).to.equal(false);
    expect(await isOptedOut(redis, deviceId, '15551240002')).to.equal(false);
    expect((await listOptOuts(redis, deviceId, { limit: 10 })).numbers[0]!.contact).to.deep.equal({
      phone,
      lid,
    });
  });

  it('When LID entries fill more than a page, then the cursor of a LID entry pages on', async () => {
    const deviceId = newDevice();
    const at = new Date('2026-01-01T00:00:00Z');
    for (const l of ['100000000000001@lid', '100000000000002@lid', '100000000000003@lid'])
      await optOut(redis, deviceId, l, 'admin', at);
    const first = await listOptOuts(redis, deviceId, { limit: 2 });
    expect(first.nextCursor).to.equal(`${at.getTime()}-100000000000002@lid`);
    const second = await listOptOuts(redis, deviceId, { limit: 2, cursor: first.nextCursor });
    expect([...first.numbers, ...second.numbers].map((n) => n.phone)).to.deep.equal([
      '100000000000003@lid',
      '100000000000002@lid',
      '100000000000001@lid',
    ]);
    expect(second.nextCursor).to.equal(undefined);
  });
});
