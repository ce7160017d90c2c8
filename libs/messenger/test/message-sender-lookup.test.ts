import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { DeviceSocket, LookupFailedError, MessageSender, type WASocket } from '../src/index.js';

/**
 * How a number lookup's answer is read. Baileys' `onWhatsApp` answers `undefined` when its usync
 * query timed out (seen while an account was being logged out under load) and a list without the
 * number when the number is not on WhatsApp; only the second may fail a message for good.
 */
describe('messenger: number lookup answers (fake socket, real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  async function senderAnswering(answers: (undefined | { jid: string; exists: boolean }[])[]) {
    const deviceId = 'lookup-' + Math.random().toString(36).slice(2, 8);
    const sock = {
      ev: new EventEmitter(),
      user: { id: '15550009999:3@s.whatsapp.net', name: 'Me' },
      profilePictureUrl: async () => undefined,
      onWhatsApp: async () => answers.shift(),
      end: async () => undefined,
    };
    const options = {
      redis,
      encryption: Encryption.fromEnv(),
      logger: createLogger({ level: 'silent', service: 'test' }),
      deviceId,
      messageRetentionSeconds: 60,
    };
    const conn = new DeviceSocket({
      ...options,
      epoch: () => 1,
      createSocket: () => sock as unknown as WASocket,
    });
    await conn.start();
    sock.ev.emit('connection.update', { connection: 'open' });
    expect(await conn.waitForOpen(5_000)).to.equal(true);
    return { deviceId, conn, sender: new MessageSender(conn, options) };
  }

  it('When the lookup query times out, then it fails retryably and nothing is cached; the next answer counts', async () => {
    const jid = '15550001111@s.whatsapp.net';
    const { deviceId, conn, sender } = await senderAnswering([undefined, [{ jid, exists: true }]]);
    let thrown: unknown;
    await sender.lookup('15550001111').catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(LookupFailedError);
    expect(await redis.hget(keys.contacts(deviceId), '15550001111')).to.equal(null);
    expect(await sender.lookup('15550001111')).to.equal(jid);
    await conn.stop();
  });

  it('When the number is not on WhatsApp (an answer without it), then null, remembered for the device', async () => {
    const { deviceId, conn, sender } = await senderAnswering([[]]);
    expect(await sender.lookup('15550002222')).to.equal(null);
    expect(await redis.hget(keys.contacts(deviceId), '15550002222')).to.equal('');
    // Asked once: the second lookup is answered from Redis (the fake has no answer left).
    expect(await sender.lookup('15550002222')).to.equal(null);
    await conn.stop();
  });
});
