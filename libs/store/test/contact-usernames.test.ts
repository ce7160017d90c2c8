import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { ContactIdentities, ContactUsernames } from '../src/index.js';

describe('store: the usernames a device resolved, in its phone <-> LID map (real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  });
  after(async () => {
    await redis.quit();
  });
  const newDevice = () => `names-${Math.random().toString(36).slice(2, 8)}`;

  it('When a username is kept with its LID, then the LID is known, contacts read by LID or by phone carry the username, and other devices know nothing', async () => {
    const usernames = new ContactUsernames(redis);
    const identities = new ContactIdentities(redis);
    const deviceId = newDevice();
    await identities.learn(deviceId, [{ phone: '15551240001', lid: '222333444555666@lid' }]);
    expect(
      await usernames.keep(deviceId, [
        { username: 'alice.shop', lid: '111222333444555@lid' },
        { username: 'bob_99', lid: '222333444555666:3@lid' },
        { username: 'nobody', lid: 'not a lid' },
      ]),
    ).to.equal(0);
    expect([
      ...(await usernames.lidsOf(deviceId, ['alice.shop', 'bob_99', 'carol', 'alice.shop'])),
    ]).to.deep.equal([
      ['alice.shop', '111222333444555@lid'],
      ['bob_99', '222333444555666@lid'],
    ]);
    expect(await identities.knowsLid(deviceId, '111222333444555@lid')).to.equal(true);
    expect(
      await identities.resolveMany(deviceId, ['111222333444555@lid', '15551240001', '15551249999']),
    ).to.deep.equal([
      { lid: '111222333444555@lid', username: 'alice.shop' },
      { phone: '15551240001', lid: '222333444555666@lid', username: 'bob_99' },
      { phone: '15551249999' },
    ]);
    expect((await usernames.lidsOf(newDevice(), ['alice.shop'])).size).to.equal(0);
    await redis.del(keys.contactIdentities(deviceId));
  });

  it('When a username moves to another account, or an account takes another username, then what it contradicts is dropped; a forgotten username leaves its LID known', async () => {
    const usernames = new ContactUsernames(redis);
    const identities = new ContactIdentities(redis);
    const deviceId = newDevice();
    await usernames.keep(deviceId, [{ username: 'alice', lid: '100000000000001@lid' }]);
    // Released and taken by another account.
    await usernames.keep(deviceId, [{ username: 'alice', lid: '100000000000002@lid' }]);
    expect((await identities.resolve(deviceId, '100000000000001@lid')).username).to.equal(undefined);
    expect((await usernames.lidsOf(deviceId, ['alice'])).get('alice')).to.equal('100000000000002@lid');
    // That account renames itself.
    await usernames.keep(deviceId, [{ username: 'alice2', lid: '100000000000002@lid' }]);
    expect((await usernames.lidsOf(deviceId, ['alice'])).size).to.equal(0);
    expect((await identities.resolve(deviceId, '100000000000002@lid')).username).to.equal('alice2');
    expect(await usernames.forget(deviceId, ['alice2', 'never-seen'])).to.equal(1);
    expect(await identities.resolve(deviceId, '100000000000002@lid')).to.deep.equal({
      lid: '100000000000002@lid',
    });
    expect(await identities.knowsLid(deviceId, '100000000000002@lid')).to.equal(true);
    await redis.del(keys.contactIdentities(deviceId));
  });

  it('When the map is full, then a new username is not kept (counted), while one that adds no field still is', async () => {
    const usernames = new ContactUsernames(redis, 4);
    const deviceId = newDevice();
    expect(await usernames.keep(deviceId, [{ username: 'first', lid: '100000000000011@lid' }])).to.equal(0);
    expect(await usernames.keep(deviceId, [{ username: 'second', lid: '100000000000012@lid' }])).to.equal(1);
    expect(await redis.hlen(keys.contactIdentities(deviceId))).to.equal(3);
    // The same pair again needs no new field.
    expect(await usernames.keep(deviceId, [{ username: 'first', lid: '100000000000011@lid' }])).to.equal(0);
    expect((await usernames.lidsOf(deviceId, ['first', 'second'])).size).to.equal(1);
    await redis.del(keys.contactIdentities(deviceId));
  });
});
