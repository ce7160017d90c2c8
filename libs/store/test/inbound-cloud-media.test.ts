import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { Encryption, InboundStore } from '@mgw/store';

describe('inbound records: a Cloud API attachment’s media id at Meta (real Redis)', function () {
  this.timeout(20_000);
  let redis: Redis;
  let inbound: InboundStore;
  const deviceId = `cloud-media-${randomUUID()}`;

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
    inbound = new InboundStore(redis, Encryption.fromEnv(), 3600);
  });
  after(async () => {
    const found = await redis.keys(`mgw:{${deviceId}}*`);
    if (found.length) await redis.del(...found);
    await redis.quit();
  });

  it('When a cloud attachment is recorded, then its media id is sealed on the record and read back from its own record’s fields only', async () => {
    const messageId = await inbound.record(deviceId, {
      platformMessageId: `wamid.${randomUUID()}`,
      from: '15550102000',
      contact: { phone: '15550102000' },
      receivedAt: new Date(),
      attachment: { type: 'image', mimeType: 'image/jpeg', size: 0 },
      cloudMediaId: '1013859600285441',
    });
    const h = await redis.hgetall(keys.message(deviceId, messageId!));
    expect(h.cloudMedia).to.be.a('string').and.not.contain('1013859600285441');
    expect(inbound.cloudMediaIdFromFields(deviceId, messageId!, h)).to.equal('1013859600285441');
    // Sealed for its own record: moved to another, it does not open; an outbound record names none.
    expect(() => inbound.cloudMediaIdFromFields(deviceId, 'other', h)).to.throw(/failed authentication/);
    expect(inbound.cloudMediaIdFromFields(deviceId, messageId!, { ...h, direction: 'outbound' })).to.equal(
      undefined,
    );
    const plain = await inbound.record(deviceId, {
      platformMessageId: `wamid.${randomUUID()}`,
      contact: { phone: '15550102000' },
      receivedAt: new Date(),
      text: 'no file',
    });
    const ph = await redis.hgetall(keys.message(deviceId, plain!));
    expect(inbound.cloudMediaIdFromFields(deviceId, plain!, ph)).to.equal(undefined);
  });
});
