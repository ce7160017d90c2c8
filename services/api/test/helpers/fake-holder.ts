import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import { DeviceCommandClient, DeviceCommandResponder, SessionStore } from '@mgw/store';
import type { DeviceHolder } from '../../src/features/holder/ask-holder.js';

/** What a fake sender answers a command for its device with: a reply, or undefined (it hangs). */
export type HolderAnswer = (
  cmd: DeviceCommand,
) => DeviceCommandReply | undefined | Promise<DeviceCommandReply | undefined>;

/**
 * What a use case that asks the device's holder needs in a test, without an API or a sender: the
 * run's real Redis (REDIS_URL, started by the mocha fixtures), the session store, the holder client,
 * and fake senders that answer device commands as the real one does. Call `setUp()` in a
 * `beforeEach` and `tearDown()` in an `afterEach` (it checks that no fake sender's handler failed).
 */
export class HolderFixture {
  redis!: Redis;
  sessions!: SessionStore;
  holder!: DeviceHolder;
  private opened: Redis[] = [];
  private failures: unknown[] = [];

  constructor(private readonly name = 'holder-fixture') {}

  /** A Redis connection of the test's own, closed by `tearDown`. */
  open(name = this.name): Redis {
    const redis = new Redis(process.env.REDIS_URL!, { connectionName: name });
    this.opened.push(redis);
    return redis;
  }

  setUp(): void {
    this.redis = this.open();
    this.sessions = new SessionStore(this.redis);
    this.holder = {
      commands: new DeviceCommandClient(this.redis, this.open(`${this.name}-blocking`)),
      sessions: this.sessions,
    };
  }

  async tearDown(): Promise<void> {
    await Promise.all(this.opened.splice(0).map((r) => r.quit()));
    expect(this.failures.splice(0), 'fake senders whose handler failed').to.deep.equal([]);
  }

  /** A device id no other test uses. */
  freshDevice(prefix = 'fh'): string {
    return `${prefix}-${randomBytes(4).toString('hex')}`;
  }

  /** Marks the device's session connected (as the sender does once its socket is open). */
  connect(deviceId: string): Promise<unknown> {
    return this.sessions.update(deviceId, 'connected');
  }

  /**
   * A sender holding `held`, answering as the real one does (services/sender device-fleet.ts): a
   * command for a device it does not hold is heard and left alone; one for its device is answered
   * with `answer(cmd)`, or never when that is undefined (a holder that hangs). Resolves, once it
   * listens, with the commands it heard (in order).
   */
  async fakeSender(held: string, answer: HolderAnswer): Promise<DeviceCommand[]> {
    const heard: DeviceCommand[] = [];
    await new DeviceCommandResponder(this.open(`${this.name}-sender`), this.redis).listen(
      async (cmd, reply) => {
        heard.push(cmd);
        if (cmd.deviceId !== held) return;
        const said = await answer(cmd);
        if (said) await reply(said);
      },
      (err) => this.failures.push(err),
    );
    return heard;
  }
}
