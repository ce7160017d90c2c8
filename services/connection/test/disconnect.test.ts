import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { keys, type DeviceCommand } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption, type MessageStore, type SessionStore } from '@mgw/store';
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

  /** Credentials that count as linked (they carry the signed device identity). */
  async function storeLinkedCreds(deviceId: string): Promise<void> {
    const bytes = randomBytes(8).toString('base64');
    await redis.set(
      keys.authCreds(deviceId),
      JSON.stringify({
        me: { id: '15550009999:3@s.whatsapp.net' },
        account: { details: bytes, accountSignature: bytes },
      }),
    );
  }

  /**
   * What disconnectDevice needs, with the lease always taken (a sender holds the device) unless
   * `leases` says otherwise; the stores it does not reach in these cases are empty stand-ins.
   */
  function depsWith(
    over: Partial<Pick<DisconnectDeps, 'blocking' | 'leases'>> & { replyTimeoutMs?: number } = {},
  ): DisconnectDeps {
    return {
      config: { connectionReplyTimeoutMs: over.replyTimeoutMs ?? 30_000 } as DisconnectDeps['config'],
      logger: createLogger({ level: 'silent', service: 'test' }),
      redis,
      blocking: over.blocking ?? redis,
      bullConnection: redis,
      leases: over.leases ?? ({ owner: 'test', acquire: async () => undefined } as unknown as LeaseManager),
      sessions: {} as SessionStore,
      messages: {} as MessageStore,
      encryption: Encryption.fromEnv(),
    };
  }

  it('When the logout throws midway (a Redis blip on the lease), then the device is back in the linked set and the error surfaces', async () => {
    const deviceId = 'disc-' + randomBytes(4).toString('hex');
    await storeLinkedCreds(deviceId);
    await redis.sadd(keys.linkedDevices(), deviceId);
    const leases = {
      owner: 'test',
      acquire: async () => {
        throw new Error('lease connection is down');
      },
    } as unknown as LeaseManager;
    const deps = depsWith({ leases });
    const outcome = await disconnectDevice(deviceId, deps).then(
      () => 'resolved',
      (err: Error) => err.message,
    );
    expect(outcome).to.equal('lease connection is down');
    expect(await redis.sismember(keys.linkedDevices(), deviceId)).to.equal(1);
    await redis.srem(keys.linkedDevices(), deviceId);
    await redis.del(keys.authCreds(deviceId));
  });

  it('When two disconnects wait for their owners at once, then a quick reply is not held up behind a slow one', async () => {
    const slow = 'disc-' + randomBytes(4).toString('hex');
    const quick = 'disc-' + randomBytes(4).toString('hex');
    for (const id of [slow, quick]) await storeLinkedCreds(id);
    // A stand-in for the owning senders: answers the quick device at once, the slow one on demand.
    const owner = redis.duplicate();
    const pending = new Map<string, string>();
    owner.on('message', (_channel: string, raw: string) => {
      const cmd = JSON.parse(raw) as DeviceCommand;
      if (cmd.deviceId === quick) void redis.rpush(keys.commandReply(cmd.requestId), '{"ok":true}');
      if (cmd.deviceId === slow) pending.set(slow, cmd.requestId);
    });
    await owner.subscribe(keys.deviceCommands());
    const blocking = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    const deps = depsWith({ blocking });
    try {
      const slowDone = disconnectDevice(slow, deps);
      let slowSettled = false;
      void slowDone.then(
        () => (slowSettled = true),
        () => (slowSettled = true),
      );
      const deadline = Date.now() + 5_000;
      while (!pending.has(slow) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(pending.has(slow), 'slow device asked').to.equal(true);
      expect(await disconnectDevice(quick, deps)).to.include({ success: true });
      // Not held up: the quick one was answered while the slow one still waited for its owner
      // (its reply is sent only below; its own wait runs 15 s and more), an order and no clock.
      expect(slowSettled, 'the slow disconnect still waiting').to.equal(false);
      await redis.rpush(keys.commandReply(pending.get(slow)!), '{"ok":true}');
      expect(await slowDone).to.include({ success: true });
    } finally {
      await owner.quit();
      await blocking.quit();
      await redis.del(keys.authCreds(slow), keys.authCreds(quick));
    }
  });

  /**
   * Runs `fn` on a linked device (in the linked set) whose owner holds the lease and listens, but
   * never replies (hung), with a blocking connection for the waits; cleans up after.
   */
  async function withSilentOwner(fn: (deviceId: string, blocking: Redis) => Promise<void>): Promise<void> {
    const deviceId = 'disc-' + randomBytes(4).toString('hex');
    await storeLinkedCreds(deviceId);
    await redis.sadd(keys.linkedDevices(), deviceId);
    const owner = redis.duplicate();
    await owner.subscribe(keys.deviceCommands());
    const blocking = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    try {
      await fn(deviceId, blocking);
    } finally {
      await owner.quit();
      await blocking.quit();
      await redis.srem(keys.linkedDevices(), deviceId);
      await redis.del(keys.authCreds(deviceId));
    }
  }

  it('When the owner never answers, then the answer is 503 before the API stops waiting, and the device stays linked', async () => {
    await withSilentOwner(async (deviceId, blocking) => {
      const apiWaitMs = 8000;
      const started = Date.now();
      const reply = await disconnectDevice(deviceId, depsWith({ replyTimeoutMs: apiWaitMs, blocking }));
      expect(reply).to.include({ success: false, httpStatus: 503 });
      // The API still gets this answer: the loop ends 5 s before the API stops waiting
      // (ANSWER_MARGIN_MS), and that margin is what a loaded host may eat (the end is a few ms late
      // when quiet), so the time it left is what is checked.
      expect(started + apiWaitMs - Date.now(), 'ms the API still had to wait').to.be.above(0);
      expect(await redis.sismember(keys.linkedDevices(), deviceId)).to.equal(1);
    });
  });

  it('When the request is taken up late and the owner never answers, then the 503 still comes before the API stops waiting (its expiresAt, not the full wait from now)', async () => {
    await withSilentOwner(async (deviceId, blocking) => {
      // The API sent it 21 s ago: 9 s of its 30 s wait are left.
      const answerBy = Date.now() + 9000;
      const started = Date.now();
      const reply = await disconnectDevice(deviceId, depsWith({ blocking }), answerBy);
      const tookMs = Date.now() - started;
      expect(reply).to.include({ success: false, httpStatus: 503 });
      // As above: 5 s of margin before the API's end, a few ms of it used when quiet.
      expect(answerBy - (started + tookMs), 'ms the API still had to wait').to.be.above(0);
      expect(tookMs, 'the owner was given the time there was').to.be.above(2500);
      expect(await redis.sismember(keys.linkedDevices(), deviceId)).to.equal(1);
    });
  });
});
