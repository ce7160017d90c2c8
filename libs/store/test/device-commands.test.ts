import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, type DeviceCommand } from '@mgw/contracts';
import { closeRedis, createRedis } from '@mgw/common';
import { waitFor } from '@mgw/testing';
import {
  DeviceCommandClient,
  DeviceCommandResponder,
  NOBODY_HOLDS_DEVICE,
  type DeviceCommandHandler,
} from '@mgw/store';

const logout = (deviceId: string): DeviceCommand => ({ type: 'logout', deviceId, requestId: randomUUID() });

describe('device commands: the client asks, the holder answers (real Redis)', () => {
  const opened: Redis[] = [];
  const open = (name = 'devcmd-test') => {
    opened.push(new Redis(process.env.REDIS_URL!, { connectionName: name }));
    return opened.at(-1)!;
  };
  const failures: unknown[] = [];
  let redis: Redis;
  let client: DeviceCommandClient;
  /** The connections named `name` the server sees now. */
  const connectionsNamed = async (name: string) =>
    String(await redis.client('LIST'))
      .split('\n')
      .filter((l) => l.includes(` name=${name} `)).length;

  /** A stand-in holder of `held`: answers its commands with `answer`, ignores every other device. */
  async function holder(held: string, handle?: DeviceCommandHandler): Promise<DeviceCommand[]> {
    const heard: DeviceCommand[] = [];
    await new DeviceCommandResponder(open(), redis).listen(
      async (cmd, reply) => {
        heard.push(cmd);
        if (cmd.deviceId !== held) return;
        await (handle ? handle(cmd, reply) : reply({ ok: true }));
      },
      (err) => failures.push(err),
    );
    return heard;
  }

  beforeEach(() => {
    redis = open();
    client = new DeviceCommandClient(redis, open('devcmd-blocking'));
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((r) => r.quit()));
    expect(failures.splice(0), 'handlers that failed').to.deep.equal([]);
  });

  it('When the holder starts listening as its connection has just connected (before the ready check), then it still hears commands once ready', async () => {
    // A sender subscribed in this window on a loaded machine: ioredis then reconnected without the subscription.
    const deviceId = 'dc-' + randomBytes(4).toString('hex');
    const subscriber = open('devcmd-fresh');
    await once(subscriber, 'connect');
    await new DeviceCommandResponder(subscriber, redis).listen(
      (_cmd, reply) => reply({ ok: true }),
      (err) => failures.push(err),
    );
    await waitFor(() => subscriber.status === 'ready', { timeoutMs: 5000, what: 'the connection ready' });

    expect(await client.ask(logout(deviceId), 3)).to.deep.equal({ ok: true });
  });

  it('When the holder answers, then ask returns its reply and no reply is left behind', async () => {
    const deviceId = 'dc-' + randomBytes(4).toString('hex');
    await holder(deviceId, (_cmd, reply) => reply({ ok: false, error: 'no media' }));
    const cmd = logout(deviceId);
    expect(await client.ask(cmd, 5)).to.deep.equal({ ok: false, error: 'no media' });
    expect(await redis.exists(keys.commandReply(cmd.requestId))).to.equal(0);
  });

  it('When the waiting template is a request-path connection (a command timeout of 1 s), then an answer after 2 s still arrives', async () => {
    const deviceId = 'dc-' + randomBytes(4).toString('hex');
    const template = createRedis(
      { url: process.env.REDIS_URL!, commandTimeoutMs: 1000 },
      'producer',
      'devcmd-producer',
    );
    try {
      const patient = new DeviceCommandClient(redis, template);
      await holder(deviceId, async (_cmd, reply) => {
        await new Promise((r) => setTimeout(r, 2000));
        await reply({ ok: true });
      });
      expect(await patient.ask(logout(deviceId), 5)).to.deep.equal({ ok: true });
    } finally {
      await closeRedis(template);
    }
  });

  it('When no process listens, then ask says nobody holds the device at once', async function () {
    this.timeout(40_000);
    const started = Date.now();
    expect(await client.ask(logout('dc-none'), 30)).to.equal(NOBODY_HOLDS_DEVICE);
    // "At once": without waiting out its 30 s timeout (a bound load cannot reach): quiet: 5 ms.
    expect(Date.now() - started).to.be.below(10_000);
  });

  it('When senders listen but none holds the device, then ask waits out its timeout and returns undefined', async () => {
    const heard = await holder('dc-other');
    const started = Date.now();
    expect(await client.ask(logout('dc-unheld'), 1)).to.equal(undefined);
    expect(Date.now() - started).to.be.at.least(900);
    expect(heard.map((c) => c.deviceId)).to.deep.equal(['dc-unheld']);
  });

  it('When the holder answers after the asker gave up, then its reply expires instead of staying', async () => {
    const deviceId = 'dc-' + randomBytes(4).toString('hex');
    let late: (() => Promise<void>) | undefined;
    await holder(deviceId, async (_cmd, reply) => {
      late = () => reply({ ok: true });
    });
    const cmd = logout(deviceId);
    expect(await client.ask(cmd, 1)).to.equal(undefined);
    await late!();
    const ttl = await redis.ttl(keys.commandReply(cmd.requestId));
    expect(ttl).to.be.within(1, 60);
  });

  it('When a message on the channel is not a command, then the holder skips it and answers the next one', async () => {
    const deviceId = 'dc-' + randomBytes(4).toString('hex');
    const heard = await holder(deviceId);
    await redis.publish(keys.deviceCommands(), 'not json');
    expect(await client.ask(logout(deviceId), 5)).to.deep.equal({ ok: true });
    expect(heard).to.have.length(1);
  });

  it('When asks end (answered or timed out), then every waiting connection they opened is closed', async () => {
    const deviceId = 'dc-' + randomBytes(4).toString('hex');
    await holder(deviceId);
    const before = await connectionsNamed('devcmd-blocking');
    const answers = await Promise.all([
      client.ask(logout(deviceId), 5),
      client.ask(logout(deviceId), 5),
      client.ask(logout('dc-unheld'), 1),
    ]);
    expect(answers).to.deep.equal([{ ok: true }, { ok: true }, undefined]);
    await waitFor(async () => (await connectionsNamed('devcmd-blocking')) === before, {
      timeoutMs: 2000,
      what: 'the waiting connections closed',
    });
  });
});
