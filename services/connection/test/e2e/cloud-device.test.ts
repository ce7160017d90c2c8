import { expect } from 'chai';
import { Queue, QueueEvents } from 'bullmq';
import { closeRedis, createRedis } from '@mgw/common';
import {
  BULL_PREFIX,
  CONNECTION_QUEUE,
  ERRORS,
  keys,
  type ConnectionReply,
  type ConnectionRequest,
} from '@mgw/contracts';
import { CloudDeviceStore } from '@mgw/store';
import { useStack } from '@mgw/testing';

/**
 * The connection service and a Cloud API device: the API connects and disconnects cloud devices
 * itself (features/cloud), so a request that still reaches this service raced a PUT /cloud and is
 * refused, neither pairing the device nor taking it off the senders' roster.
 */
describe('e2e: the connection service refuses to pair or unlink a Cloud API device (real services)', function () {
  this.timeout(120_000);
  const stack = useStack({ senders: 0 });

  it('When a connect and a disconnect of a cloud device reach it, then both answer 409, no pairing starts and the device stays on the roster', async () => {
    const deviceId = stack().deviceId;
    await new CloudDeviceStore(stack().redis, stack().encryption).set(deviceId, {
      phoneNumberId: '4242',
      wabaId: '4343',
      accessToken: 'token-of-a-cloud-number',
      appSecret: 'app-secret',
      verifyToken: 'verify-token',
    });
    await stack().redis.sadd(keys.linkedDevices(), deviceId);

    const connection = createRedis(stack().redisUrl, 'worker', 'cloud-device-test');
    const queue = new Queue<ConnectionRequest, ConnectionReply>(CONNECTION_QUEUE, {
      connection,
      prefix: BULL_PREFIX,
    });
    const events = new QueueEvents(CONNECTION_QUEUE, {
      connection: connection.duplicate(),
      prefix: BULL_PREFIX,
    });
    try {
      await events.waitUntilReady();
      const ask = async (request: ConnectionRequest) => {
        const job = await queue.add(request.action, { ...request, expiresAt: Date.now() + 30_000 });
        return (await job.waitUntilFinished(events, 30_000)) as ConnectionReply;
      };
      const refused = { success: false, error: ERRORS.cloudDeviceRaced, httpStatus: 409 };
      expect(
        await ask({ action: 'connect', deviceId, method: 'qrCode', forceNew: false, rawQrCode: true }),
      ).to.deep.equal(refused);
      expect(await ask({ action: 'disconnect', deviceId })).to.deep.equal(refused);
      expect(await stack().redis.exists(keys.pairing(deviceId))).to.equal(0);
      expect(await stack().redis.sismember(keys.linkedDevices(), deviceId)).to.equal(1);
    } finally {
      await queue.close();
      await events.close();
      await closeRedis(connection);
    }
  });
});
