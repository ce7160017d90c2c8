import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { EVENT_TYPES, keys, type EventType } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import { storeScript } from '../lua.js';
import type { Sealer } from '../encryption/sealer.js';
import { webhookDeliveryKeys } from './webhook-deliveries.js';
import { webhookReportKey } from './webhook-report.js';

/** A device's webhook as the API shows it (never with its secret, except right after it was made). */
export interface WebhookView {
  url: string;
  events: EventType[];
  createdAt: string;
  /** Set when the endpoint answered 410 Gone: no event is delivered until it is set again. */
  disabledAt?: string;
  disabledReason?: string;
  /** The new secret: only in the answer of the PUT that created or rotated it. */
  secret?: string;
}

/** What the notifier needs to deliver: the URL and every secret that signs now. */
export interface WebhookTarget {
  url: string;
  /** The current secret first; during a rotation the previous one too (each signs). */
  secrets: string[];
  disabled: boolean;
}

/** Standard Webhooks secrets: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}

/**
 * The webhook endpoint of each device (`keys.webhook`), one per device, with its signing secret
 * sealed (libs/store encryption, bound to the key and field) — never in the clear in Redis.
 * `keys.webhookDevices()` lists the devices that have one (the notifier serves those).
 */
export class WebhookStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    /** How long the previous secret keeps signing after a rotation. */
    private readonly rotationOverlapSeconds: number,
  ) {}

  /**
   * Creates or replaces the device's endpoint. A new endpoint, or `rotateSecret`, makes a new
   * secret (returned once); a rotation keeps the previous secret signing for the overlap. Setting
   * an endpoint again re-enables one that was disabled.
   */
  async set(
    deviceId: string,
    input: { url: string; events?: EventType[]; rotateSecret?: boolean },
    now = new Date(),
  ): Promise<WebhookView> {
    const key = keys.webhook(deviceId);
    const existing = await this.redis.hmget(key, 'secret', 'createdAt');
    const fresh = !existing[0];
    const fields: Record<string, string> = {
      url: input.url,
      events: input.events ? input.events.join(',') : '*',
      createdAt: existing[1] ?? now.toISOString(),
      failures: '0',
    };
    let secret: string | undefined;
    if (fresh || input.rotateSecret) {
      secret = newWebhookSecret();
      fields.secret = this.sealer.sealText(secret, storageContext(key, 'secret'));
      if (!fresh) {
        const previous = this.sealer.openText(existing[0]!, storageContext(key, 'secret'));
        fields.previousSecret = this.sealer.sealText(previous, storageContext(key, 'previousSecret'));
        fields.previousUntil = String(now.getTime() + this.rotationOverlapSeconds * 1000);
      }
    }
    // The global set first (another slot on Redis Cluster, so not in the device's transaction): a
    // crash in between leaves a device listed without a webhook, which the notifier ignores.
    await this.redis.sadd(keys.webhookDevices(), deviceId);
    await this.redis.multi().hdel(key, 'disabledAt', 'disabledReason').hset(key, fields).exec();
    await this.redis.publish(keys.webhooksChannel(), deviceId);
    return { ...viewOf(fields), ...(secret ? { secret } : {}) };
  }

  async get(deviceId: string): Promise<WebhookView | undefined> {
    const h = await this.redis.hgetall(keys.webhook(deviceId));
    return h.url ? viewOf(h) : undefined;
  }

  /**
   * Removes the endpoint and the events not delivered yet (first attempts and retries), and its
   * delivery report; false when there was none.
   */
  async remove(deviceId: string): Promise<boolean> {
    const k = webhookDeliveryKeys(deviceId);
    const [[, deleted]] = (await this.redis
      .multi()
      .del(keys.webhook(deviceId))
      .del(k.outbox, k.retries, k.retryData, webhookReportKey(deviceId))
      .exec()) as [[Error | null, number]];
    await this.redis.srem(keys.webhookDevices(), deviceId);
    await this.redis.publish(keys.webhooksChannel(), deviceId);
    return deleted === 1;
  }

  /** Where and how to deliver now; undefined when the device has no endpoint. */
  async target(deviceId: string, now = Date.now()): Promise<WebhookTarget | undefined> {
    const key = keys.webhook(deviceId);
    const h = await this.redis.hgetall(key);
    if (!h.url || !h.secret) return undefined;
    const secrets = [this.sealer.openText(h.secret, storageContext(key, 'secret'))];
    if (h.previousSecret && Number(h.previousUntil ?? 0) > now) {
      secrets.push(this.sealer.openText(h.previousSecret, storageContext(key, 'previousSecret')));
    }
    return { url: h.url, secrets, disabled: Boolean(h.disabledAt) };
  }

  /** The endpoint answered 410 Gone: stop emitting and delivering until it is set again. */
  async disable(deviceId: string, reason: string, at = new Date()): Promise<void> {
    const key = keys.webhook(deviceId);
    if (!(await this.redis.exists(key))) return;
    await this.redis.hset(key, { disabledAt: at.toISOString(), disabledReason: reason });
    await this.redis.publish(keys.webhooksChannel(), deviceId);
  }

  /** Counts a failed attempt; returns the failures in a row. */
  async recordFailure(deviceId: string): Promise<number> {
    return Number(await COUNT_FAILURE.run(this.redis, [keys.webhook(deviceId)]));
  }

  async recordSuccess(deviceId: string): Promise<void> {
    await RESET_FAILURES.run(this.redis, [keys.webhook(deviceId)]);
  }

  /** Devices with an endpoint. */
  devices(): Promise<string[]> {
    return this.redis.smembers(keys.webhookDevices());
  }
}

// Only on an endpoint that still exists: a late attempt must not re-create a removed one's hash.
const COUNT_FAILURE = storeScript<number>('webhook-failure-count-1');
const RESET_FAILURES = storeScript<number>('webhook-failure-reset-1');

function viewOf(h: Record<string, string>): WebhookView {
  return {
    url: h.url!,
    events: !h.events || h.events === '*' ? [...EVENT_TYPES] : (h.events.split(',') as EventType[]),
    createdAt: h.createdAt!,
    ...(h.disabledAt ? { disabledAt: h.disabledAt, disabledReason: h.disabledReason ?? 'gone' } : {}),
  };
}
