import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { createMetrics, FAILURE_REASONS, keys } from '@mgw/contracts';
import { ServerRejectedError } from '@mgw/messenger';
import { DeviceRestriction } from '../src/device/device-restriction.js';
import { PermanentSendError } from '../src/send/send-errors.js';

/**
 * An ack 463 on a one-to-one message that carried no privacy token, while WhatsApp says the
 * account is neither locked nor capped, is about that message — whether the device had no NCT salt
 * or had one but could not resolve the contact's LID (no cstoken without a LID): it fails
 * first_contact_token_missing and the device is not paused. A 463 on a message that carried a token
 * is about the account: paused as before.
 */
describe('sender: an ack 463 on a message sent without a privacy token (DeviceRestriction)', () => {
  let redis: Redis;
  const deviceId = `r463-${Math.random().toString(36).slice(2, 8)}`;

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.del(keys.deviceRestriction(deviceId));
    await redis.quit();
  });

  const restriction = () =>
    new DeviceRestriction({
      redis,
      deviceId,
      conn: {
        fetchReachoutLock: async () => ({ active: false }),
        fetchNewChatCap: async () => ({ capped: false }),
      },
      backoff: { restrictionMs: 60_000, rateLimitMs: 60_000, failureRun: 0, failureMs: 60_000 },
      metrics: createMetrics(),
      logger: createLogger({ level: 'silent', service: 'test' }),
      wakeHeld: async () => undefined,
    });

  for (const salt of [false, true]) {
    it(`When a first contact went without a token from a device ${salt ? 'holding a salt but without the contact’s LID' : 'without a salt'}, then it fails first_contact_token_missing and nothing is paused`, async () => {
      const err = await restriction()
        .onSendFailed(new ServerRejectedError('463', { token: 'none', salt }))
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(PermanentSendError);
      expect((err as PermanentSendError).reason).to.equal(FAILURE_REASONS.firstContactTokenMissing);
      expect(await redis.exists(keys.deviceRestriction(deviceId))).to.equal(0);
    });
  }

  it('When the message carried a cstoken, then the 463 is about the account and the device is paused', async () => {
    const until = await restriction().onSendFailed(
      new ServerRejectedError('463', { token: 'cstoken', salt: true }),
    );
    expect(until).to.be.a('number');
    await redis.del(keys.deviceRestriction(deviceId));
  });
});
