import { serializeError, type Logger } from './logger.js';
import type { RedisClient } from './redis.js';

export interface SubscriptionOptions {
  /**
   * A connection of the `subscriber` role. Other subscriptions may share it (each its own
   * channels); nothing else may use it.
   */
  client: RedisClient;
  channels: readonly string[];
  /** A message on one of `channels` (messages of the connection's other channels are not passed). */
  onMessage: (channel: string, message: string) => void;
  logger: Logger;
  /**
   * After each confirmation that follows a time without the subscription (the first one too):
   * messages published meanwhile were lost, so this is where to catch up (e.g. a sweep).
   */
  onSubscribed?: () => void;
  /** Each time a confirmed subscription is lost (messages from now on are missed until `onSubscribed`). */
  onLost?: () => void;
  /** 1 per channel while subscribed, 0 while not (e.g. the `mgw_redis_subscribed` gauge). */
  gauge?: { set(labels: { channel: string }, value: number): void };
  /** How often the subscription is confirmed again while all seems well (ms). */
  checkMs?: number;
  /** A SUBSCRIBE not answered within this (ms) means a dead connection: it is reopened. */
  timeoutMs?: number;
  /** Wait before trying again after a refused SUBSCRIBE (ms). */
  retryMs?: number;
}

class SubscribeTimeout extends Error {
  override name = 'SubscribeTimeout';
}

/**
 * A Redis pub/sub subscription that this process can rely on, and tell when it cannot.
 *
 * ioredis's own resubscription is not enough. A SUBSCRIBE issued while the connection has
 * connected but not yet passed its ready check (ioredis status `connect`) is sent at once (it is
 * allowed while Redis loads): the connection enters subscriber mode, the ready check's INFO is
 * then refused ("Connection in subscriber mode"), ioredis drops the connection as failed and
 * reconnects — without resubscribing, because the connection was never "ready" with a
 * subscription — while the SUBSCRIBE's promise had already resolved. The service believes it is
 * subscribed and hears nothing (`CLIENT LIST`: `sub=0 cmd=info`). Any service that subscribes
 * right after opening its connection can hit this; a loaded machine widens the window.
 *
 * So this subscribes only on a ready connection, counts the subscription as held only when the
 * server has answered every channel on the same connection (no close in between), subscribes
 * again after every reconnect and every `checkMs` (an idle SUBSCRIBE is a no-op for Redis, and a
 * pub/sub connection is otherwise silent: a half-open one would go unnoticed), reopens the
 * connection when a SUBSCRIBE is not answered within `timeoutMs`, and retries a refused one
 * every `retryMs`. A loss is logged at warn, its end at info, and `subscribed` / `problem` tell
 * readiness probes.
 */
export class Subscription {
  private held = false;
  /** Why it is not held, while it is not. */
  private why: string | undefined = 'not confirmed by Redis yet';
  private lostAt = Date.now();
  private everHeld = false;
  /** Bumped on every close of the connection: an answer from before one proves nothing. */
  private epoch = 0;
  private stopped = false;
  private confirming: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retryTimer: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  private firstHeld!: () => void;
  /** Resolves the first time the subscription is confirmed (never rejects). */
  readonly ready = new Promise<void>((resolve) => (this.firstHeld = resolve));
  private readonly channelSet: Set<string>;

  constructor(private readonly opts: SubscriptionOptions) {
    this.channelSet = new Set(opts.channels);
  }

  /** True while the server has confirmed every channel on the current connection. */
  get subscribed(): boolean {
    return this.held;
  }

  /** Why it is not subscribed now (for a readiness answer); undefined while it is. */
  get problem(): string | undefined {
    return this.held ? undefined : `not subscribed to ${this.opts.channels.join(', ')}: ${this.why}`;
  }

  /** Starts listening; resolves once the subscription is confirmed the first time (see `ready`). */
  start(): Promise<void> {
    const { client, channels, checkMs = 10_000 } = this.opts;
    channels.forEach((channel) => this.opts.gauge?.set({ channel }, 0));
    client.on('message', this.onMessage);
    client.on('close', this.onClose);
    client.on('ready', this.onReady);
    this.timer = setInterval(() => void this.confirm(), checkMs);
    this.timer.unref();
    void this.confirm();
    return this.ready;
  }

  /** Stops listening and unsubscribes its own channels (not the connection's others). */
  async stop(): Promise<void> {
    const { client, channels } = this.opts;
    this.stopped = true;
    clearInterval(this.timer);
    this.retryTimer?.resolve();
    // Whoever waits for the first confirmation is stopping too.
    this.firstHeld();
    client.off('message', this.onMessage);
    client.off('close', this.onClose);
    client.off('ready', this.onReady);
    if (client.status === 'ready') await client.unsubscribe(...channels).catch(() => undefined);
    this.held = false;
    channels.forEach((channel) => this.opts.gauge?.set({ channel }, 0));
  }

  private readonly onMessage = (channel: string, message: string): void => {
    if (this.channelSet.has(channel)) this.opts.onMessage(channel, message);
  };

  private readonly onClose = (): void => {
    this.epoch++;
    // ioredis decides just after 'close' whether it reconnects: a connection closed for good
    // (the process shutting down) is no loss to report.
    queueMicrotask(() =>
      this.lose('the Redis connection closed', undefined, this.opts.client.status === 'end'),
    );
  };

  private readonly onReady = (): void => void this.confirm();

  /** One confirmation at a time; one asked for meanwhile is covered by the loop below. */
  private confirm(): Promise<void> {
    this.confirming ??= this.confirmLoop().finally(() => (this.confirming = undefined));
    return this.confirming;
  }

  private async confirmLoop(): Promise<void> {
    const { client, channels, timeoutMs = 5000, retryMs = 1000 } = this.opts;
    while (!this.stopped) {
      // Not before the connection is ready (see the class comment); 'ready' brings us back.
      if (client.status !== 'ready') return;
      const epoch = this.epoch;
      try {
        const count = await withDeadline(client.subscribe(...channels), timeoutMs);
        if (this.stopped) return;
        // The connection changed under the answer: confirm on the one there is now.
        if (epoch !== this.epoch) continue;
        if (Number(count) < channels.length) {
          throw new Error(`the server counts ${count} channels, fewer than ${channels.length}`);
        }
        this.hold();
        return;
      } catch (err) {
        if (this.stopped) return;
        if (epoch !== this.epoch) continue;
        this.lose(err instanceof SubscribeTimeout ? err.message : `SUBSCRIBE failed: ${errorText(err)}`, err);
        // Unanswered on a ready connection: it is dead without knowing it. Reopening it brings
        // 'close' and 'ready', and a confirmation on the new one.
        if (err instanceof SubscribeTimeout) return client.disconnect(true);
        await this.pause(retryMs);
      }
    }
  }

  private hold(): void {
    if (this.held) return;
    const { logger, channels, onSubscribed } = this.opts;
    const first = !this.everHeld;
    this.everHeld = true;
    this.held = true;
    this.why = undefined;
    channels.forEach((channel) => this.opts.gauge?.set({ channel }, 1));
    if (first) logger.debug('Redis subscription confirmed', { channels });
    else logger.info('Redis subscription restored', { channels, downMs: Date.now() - this.lostAt });
    this.firstHeld();
    onSubscribed?.();
  }

  /** Logged when it was held, or when the reason changes (a refusal repeated every retry is logged once). */
  private lose(why: string, err?: unknown, quiet = false): void {
    const { logger, channels } = this.opts;
    const [wasHeld, before] = [this.held, this.why];
    this.held = false;
    this.why = why;
    if (this.stopped) return;
    if (wasHeld) this.opts.onLost?.();
    if (quiet) return channels.forEach((channel) => this.opts.gauge?.set({ channel }, 0));
    channels.forEach((channel) => this.opts.gauge?.set({ channel }, 0));
    if (wasHeld) this.lostAt = Date.now();
    // A close while not held is no news (a reconnect at start, or one already logged).
    else if (err === undefined || why === before) return;
    const message = wasHeld
      ? 'Redis subscription lost; messages are missed until it is back'
      : 'Redis subscription not confirmed; trying again';
    logger.warn(message, {
      channels,
      why,
      ...(err === undefined ? {} : { err: serializeError(err) }),
    });
  }

  /** A wait that `stop()` cuts short. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.retryTimer = { timer, resolve };
    }).finally(() => {
      clearTimeout(this.retryTimer?.timer);
      this.retryTimer = undefined;
    });
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SubscribeTimeout(`SUBSCRIBE unanswered for ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}
