import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { createLogger, type MessageStore, type SessionStore } from '@mgw/common';
import type { LeaseManager } from '@mgw/messenger';
import { disconnectDevice, type DisconnectDeps } from '../src/disconnect.js';

describe('connection: disconnect keeps a linked device when the logout does not complete (real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When the logout throws midway (a Redis blip on the lease), then the device is back in the linked set and the error surfaces', async () => {
    const deviceId = 'disc-' + randomBytes(4).toString('hex');
    const bytes = randomBytes(8).toString('base64');
    await redis.set(
      keys.authCreds(deviceId),
      JSON.stringify({
        me: { id: '15550009999:3@s.whatsapp.net' },
        account: { details: bytes, accountSignature: bytes },
      }),
    );
    await redis.sadd(keys.linkedDevices(), deviceId);
    const leases = {
      owner: 'test',
      acquire: async () => {
        throw new Error('lease connection is down');
      },
    } as unknown as LeaseManager;
    const deps = {
      config: {} as DisconnectDeps['config'],
      logger: createLogger({ level: 'silent', service: 'test' }),
      redis,
      blocking: redis,
      bullConnection: redis,
      leases,
      sessions: {} as SessionStore,
      messages: {} as MessageStore,
    } satisfies DisconnectDeps;
    const outcome = await disconnectDevice(deviceId, deps).then(
      () => 'resolved',
      (err: Error) => err.message,
    );
    expect(outcome).to.equal('lease connection is down');
    expect(await redis.sismember(keys.linkedDevices(), deviceId)).to.equal(1);
    await redis.srem(keys.linkedDevices(), deviceId);
    await redis.del(keys.authCreds(deviceId));
  });
});
