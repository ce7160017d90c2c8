import {
  Subscription,
  createLogger,
  isClusterClient,
  waitForRedis,
  type Logger,
  type RedisClient,
  type SubscriptionOptions,
} from '@mgw/common';
import { keys, type DeviceCommand, type DeviceCommandReply } from '@mgw/contracts';

/**
 * Device commands: only the process that holds a device's lease has its WhatsApp socket, so a
 * request that needs the socket (log out, download an inbound attachment) is published on
 * `keys.deviceCommands()` to every sender; the holder does it and pushes its answer on
 * `keys.commandReply(requestId)`, a list the asker BLPOPs. The asker's half is
 * `DeviceCommandClient`, the holder's `DeviceCommandResponder`.
 */

/** An answer nobody takes (the asker gave up) is dropped after this long. */
const REPLY_TTL_SECONDS = 60;
/** A waiting connection's commands may take the wait and this much more. */
const WAIT_SLACK_SECONDS = 5;
/** A blocking connection not ready within this time fails the ask (Redis is away). */
const CONNECT_TIMEOUT_MS = 5000;

/** No process holds the device, so no answer will come: said at once, not after the wait. */
export const NOBODY_HOLDS_DEVICE = 'nobody-holds-device';

export type DeviceCommandAnswer = DeviceCommandReply | typeof NOBODY_HOLDS_DEVICE | undefined;

export class DeviceCommandClient {
  constructor(
    /** Publishes the commands (and, on a cluster, reads the leases). */
    private readonly redis: RedisClient,
    /**
     * Template of the waiting connections: BLPOP holds its connection and asks run concurrently,
     * so each wait gets a duplicate of its own, closed when the wait ends.
     */
    private readonly blocking: RedisClient,
  ) {}

  /**
   * Sends the command to the device's holder and waits up to `timeoutSeconds` for its reply:
   * the reply; NOBODY_HOLDS_DEVICE when it is certain nobody will answer; undefined when no
   * answer came in time (a holder that hangs, or one that is not a sender).
   */
  async ask(command: DeviceCommand, timeoutSeconds: number): Promise<DeviceCommandAnswer> {
    if (!(await this.publish(command))) return NOBODY_HOLDS_DEVICE;
    return awaitCommandReply(this.blocking, command.requestId, timeoutSeconds);
  }

  /**
   * Publishes the command unless nobody can answer it; false when nobody can. On one Redis
   * server the count PUBLISH returns is every subscribed sender: 0 proves nobody listens. On a
   * Redis Cluster it counts only the subscribers of the node that took the PUBLISH (the message
   * still reaches every node), so 0 proves nothing there; what is known cluster-wide is the
   * device's lease, and only its holder answers: no lease, no answer.
   */
  private async publish(command: DeviceCommand): Promise<boolean> {
    const message = JSON.stringify(command);
    if (!isClusterClient(this.redis)) return (await this.redis.publish(keys.deviceCommands(), message)) > 0;
    if (!(await this.redis.exists(keys.lease(command.deviceId)))) return false;
    await this.redis.publish(keys.deviceCommands(), message);
    return true;
  }
}

/**
 * Waits up to `timeoutSeconds` for the answer pushed on `keys.commandReply(requestId)` (a device
 * command's, or a connection command's that has one), on a connection of its own made from
 * `blocking`; undefined when none came.
 */
export async function awaitCommandReply(
  blocking: RedisClient,
  requestId: string,
  timeoutSeconds: number,
): Promise<DeviceCommandReply | undefined> {
  const conn = waitingCopy(blocking, timeoutSeconds);
  try {
    await waitForRedis(conn, CONNECT_TIMEOUT_MS);
    const got = await conn.blpop(keys.commandReply(requestId), timeoutSeconds);
    return got ? (JSON.parse(got[1]) as DeviceCommandReply) : undefined;
  } finally {
    conn.disconnect();
  }
}

/**
 * A connection of its own for one BLPOP of up to `timeoutSeconds`: the template's options, with a
 * command timeout past the wait (a request-path template has REDIS_COMMAND_TIMEOUT_MS, which
 * would end the wait after a few seconds).
 */
function waitingCopy(template: RedisClient, timeoutSeconds: number): RedisClient {
  const commandTimeout = (timeoutSeconds + WAIT_SLACK_SECONDS) * 1000;
  if (isClusterClient(template))
    return template.duplicate([], { redisOptions: { ...template.options.redisOptions, commandTimeout } });
  return template.duplicate({ commandTimeout });
}

/**
 * What the holder does with a command: nothing for a device it does not hold (the holder
 * answers), else the work and then `reply` with the outcome (at most once).
 */
export type DeviceCommandHandler = (
  command: DeviceCommand,
  reply: (answer: DeviceCommandReply) => Promise<void>,
) => Promise<void>;

export class DeviceCommandResponder {
  private subscription?: Subscription;

  constructor(
    /** A connection in subscriber mode (it may listen to other channels too). */
    private readonly subscriber: RedisClient,
    /** Writes the replies. */
    private readonly redis: RedisClient,
    /** Where a lost subscription is said (see `Subscription`). */
    private readonly logger: Logger = createLogger({ service: 'device-commands', level: 'silent' }),
    /** 1 while subscribed (`mgw_redis_subscribed`). */
    private readonly gauge?: SubscriptionOptions['gauge'],
  ) {}

  /**
   * Hands every command published from now on to `handle`; a failed one goes to `onError`.
   * Resolves once Redis has confirmed the subscription (kept through reconnects).
   */
  async listen(handle: DeviceCommandHandler, onError: (err: unknown) => void): Promise<void> {
    this.subscription = new Subscription({
      client: this.subscriber,
      channels: [keys.deviceCommands()],
      onMessage: (_channel, raw) => {
        const command = parseCommand(raw);
        if (!command) return;
        handle(command, (answer) => this.reply(command.requestId, answer)).catch(onError);
      },
      logger: this.logger,
      gauge: this.gauge,
    });
    await this.subscription.start();
  }

  /** Why commands are not heard now (undefined while they are). */
  get problem(): string | undefined {
    return this.subscription ? this.subscription.problem : 'not listening';
  }

  private async reply(requestId: string, answer: DeviceCommandReply): Promise<void> {
    const key = keys.commandReply(requestId);
    await this.redis.multi().rpush(key, JSON.stringify(answer)).expire(key, REPLY_TTL_SECONDS).exec();
  }
}

function parseCommand(raw: string): DeviceCommand | undefined {
  try {
    return JSON.parse(raw) as DeviceCommand;
  } catch {
    return undefined;
  }
}
