import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { CONNECTION_MESSAGES, keys, type ConnectionReply } from '@mgw/contracts';
import { DisconnectCoordinator } from '../src/disconnect-coordinator.js';
import { Liveness } from '../src/liveness.js';

describe('connection: one disconnect per device, joined by the others (real Redis)', () => {
  let redis: Redis;
  let a: Liveness;
  let b: Liveness;
  const logger = createLogger({ level: 'silent', service: 'test' });
  const device = () => `dc-${Math.random().toString(36).slice(2, 8)}`;
  const done: ConnectionReply = { success: true, message: CONNECTION_MESSAGES.disconnected };

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    [a, b] = [new Liveness(redis, 'connection:a', logger), new Liveness(redis, 'connection:b', logger)];
    await Promise.all([a.start(), b.start()]);
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await redis.quit();
  });

  it('When disconnects of one device run at once on two replicas, then the work runs once and all answer its reply', async () => {
    const deviceId = device();
    const [ca, cb] = [
      new DisconnectCoordinator(redis, a, 10_000),
      new DisconnectCoordinator(redis, b, 10_000),
    ];
    let runs = 0;
    let during: boolean | undefined;
    // The work lasts 4 s, the window in which the other two calls join it: 10 x and more what
    // their claims take on a loaded host. It looks at the marker itself while it runs.
    const work = async () => {
      runs += 1;
      during = await ca.inProgress(deviceId);
      await new Promise((r) => setTimeout(r, 4000));
      return done;
    };
    const replies = await Promise.all([
      ca.run(deviceId, work),
      cb.run(deviceId, work),
      ca.run(deviceId, work),
    ]);
    expect(runs).to.equal(1);
    expect(replies).to.deep.equal([done, done, done]);
    expect(during, 'in progress while it ran').to.equal(true);
    expect(await cb.inProgress(deviceId), 'in progress after it ended').to.equal(false);
  });

  it('When the disconnect that holds the marker belongs to a process that is not alive, then the next one takes over at once', async () => {
    const deviceId = device();
    await redis.set(
      keys.disconnecting(deviceId),
      JSON.stringify({ id: 'dead', owner: 'connection:dead', state: 'running' }),
      'PX',
      60_000,
    );
    const cb = new DisconnectCoordinator(redis, b, 10_000);
    expect(await cb.inProgress(deviceId), 'a dead process blocks no connect').to.equal(false);
    const started = Date.now();
    expect(await cb.run(deviceId, async () => done)).to.deep.equal(done);
    // Not after the dead one's marker lapsed (60 s): quiet: 160 ms.
    expect(Date.now() - started).to.be.lessThan(10_000);
  });

  it('When the work throws, then the caller sees the error and the joiners a 502 reply', async () => {
    const deviceId = device();
    const [ca, cb] = [
      new DisconnectCoordinator(redis, a, 10_000),
      new DisconnectCoordinator(redis, b, 10_000),
    ];
    const failing = ca.run(deviceId, async () => {
      await new Promise((r) => setTimeout(r, 300));
      throw new Error('redis blip');
    });
    const joined = cb.run(deviceId, async () => done);
    expect(
      await failing.then(
        () => 'resolved',
        (err: Error) => err.message,
      ),
    ).to.equal('redis blip');
    expect(await joined).to.include({ success: false, httpStatus: 502 });
  });
});
