import { createHash } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import {
  CLOUD_WEBHOOK_SEEN_TTL_SECONDS,
  CLOUD_WINDOW_MS,
  DEFAULT_CLOUD_THROUGHPUT_PER_SECOND,
  DEFAULT_GRAPH_VERSION,
  keys,
  type CloudDeviceConfig,
  type CloudDeviceInput,
  type CloudDeviceState,
  type CloudNumberProfile,
  type DeviceEngine,
  cloudPhoneOf,
} from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';
import { SessionStore } from './session-store.js';

/** The authentication template `/otp` sends on a cloud device unless its configuration names another. */
export const DEFAULT_OTP_TEMPLATE = 'verification_code';

/** The session record's disconnect reason when a cloud device was disconnected on request. */
export const CLOUD_DISCONNECTED = 'disconnect_requested';

/** Another device already is this Cloud API number (one device per number, install-wide). */
export class CloudNumberTakenError extends Error {
  override name = 'CloudNumberTakenError';
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The Cloud API devices (docs/cloud-api.md): each one's configuration, sealed as one value bound
 * to its key (the access token, the app secret and the verify token are never in Redis in the
 * clear), and the two indexes Meta's webhooks are routed by: phone-number id -> device, and the
 * verify token's SHA-256 -> devices. A device is `cloud` exactly while its configuration exists.
 *
 * The indexes are global keys and the configuration is in the device's slot, so on Redis Cluster
 * they cannot be written in one transaction: the number is claimed first (HSETNX), so two devices
 * never hold one number; a crash between the writes leaves an index entry that names a device
 * without a configuration, which every reader treats as no device (and the next `set` repairs).
 */
/** The session record's writers a cloud device's state goes through (a script: see SessionStore). */
export type CloudSessions = Pick<SessionStore, 'update' | 'markDisconnected'>;

export class CloudDeviceStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    private readonly sessions: CloudSessions = new SessionStore(redis),
  ) {}

  /** The device's engine: `cloud` while it has a cloud configuration, else `linked`. */
  async engineOf(deviceId: string): Promise<DeviceEngine> {
    return (await this.redis.exists(keys.cloudDevice(deviceId))) === 1 ? 'cloud' : 'linked';
  }

  /**
   * Makes the device this Cloud API number (replacing an earlier configuration of it). Throws
   * CloudNumberTakenError when another device is that number.
   */
  async set(deviceId: string, input: CloudDeviceInput, now = new Date()): Promise<CloudDeviceConfig> {
    const config: CloudDeviceConfig = {
      phoneNumberId: input.phoneNumberId,
      wabaId: input.wabaId,
      accessToken: input.accessToken,
      appSecret: input.appSecret,
      verifyToken: input.verifyToken,
      throughputPerSecond: input.throughputPerSecond ?? DEFAULT_CLOUD_THROUGHPUT_PER_SECOND,
      graphVersion: input.graphVersion ?? DEFAULT_GRAPH_VERSION,
      otpTemplate: input.otpTemplate ?? DEFAULT_OTP_TEMPLATE,
      updatedAt: now.toISOString(),
    };
    const numbers = keys.cloudNumbers();
    const claimed = await this.redis.hsetnx(numbers, config.phoneNumberId, deviceId);
    if (claimed === 0) {
      const holder = await this.redis.hget(numbers, config.phoneNumberId);
      // An entry left by a crash (its device holds no configuration of that number) is taken over.
      if (holder !== deviceId && holder !== null && (await this.numberOf(holder)) === config.phoneNumberId)
        throw new CloudNumberTakenError('another device is this phone number');
      await this.redis.hset(numbers, config.phoneNumberId, deviceId);
    }
    const earlier = await this.get(deviceId);
    const key = keys.cloudDevice(deviceId);
    await this.redis.set(key, this.sealer.sealText(JSON.stringify(config), storageContext(key)));
    await this.redis.sadd(keys.cloudVerifyToken(sha256Hex(config.verifyToken)), deviceId);
    if (earlier) await this.dropIndexes(deviceId, earlier, config);
    return config;
  }

  /** The device's configuration, opened (its secrets included: for the engine only). */
  async get(deviceId: string): Promise<CloudDeviceConfig | undefined> {
    const key = keys.cloudDevice(deviceId);
    const sealed = await this.redis.get(key);
    if (!sealed) return undefined;
    return JSON.parse(this.sealer.openText(sealed, storageContext(key))) as CloudDeviceConfig;
  }

  /** The device that is this phone-number id, when one is (and still holds its configuration). */
  async deviceOfNumber(phoneNumberId: string): Promise<string | undefined> {
    const deviceId = await this.redis.hget(keys.cloudNumbers(), phoneNumberId);
    if (deviceId === null) return undefined;
    return (await this.numberOf(deviceId)) === phoneNumberId ? deviceId : undefined;
  }

  /** The cloud devices whose verify token this is (Meta's handshake); none for an unknown token. */
  async devicesOfVerifyToken(verifyToken: string): Promise<string[]> {
    return this.redis.smembers(keys.cloudVerifyToken(sha256Hex(verifyToken)));
  }

  /**
   * Forgets the device's configuration (it is `linked` again, unlinked, its session record
   * `disconnected`); false when it had none.
   */
  async forget(deviceId: string): Promise<boolean> {
    const earlier = await this.get(deviceId);
    if (!earlier) return false;
    if ((await this.state(deviceId))?.status === 'connected')
      await this.sessions.markDisconnected(deviceId, CLOUD_DISCONNECTED);
    await this.redis.del(
      keys.cloudDevice(deviceId),
      keys.cloudProfile(deviceId),
      keys.cloudState(deviceId),
      keys.cloudWindows(deviceId),
      keys.cloudReached(deviceId),
      keys.cloudTemplates(deviceId),
    );
    await this.dropIndexes(deviceId, earlier);
    return true;
  }

  /** What the number said of itself when last checked (`/connect`, the engine). */
  async profile(deviceId: string): Promise<CloudNumberProfile | undefined> {
    const raw = await this.redis.get(keys.cloudProfile(deviceId));
    return raw ? (JSON.parse(raw) as CloudNumberProfile) : undefined;
  }

  async keepProfile(deviceId: string, profile: CloudNumberProfile): Promise<void> {
    await this.redis.set(keys.cloudProfile(deviceId), JSON.stringify(profile));
  }

  /**
   * Whether the cloud device is connected: `/connect` (its check passed) makes it so; the engine
   * turns it `disconnected` with a reason when its token stops working. Undefined: never connected.
   */
  async state(deviceId: string): Promise<CloudDeviceState | undefined> {
    const raw = await this.redis.get(keys.cloudState(deviceId));
    return raw ? (JSON.parse(raw) as CloudDeviceState) : undefined;
  }

  /**
   * Sets the cloud device's state and, in step with it, its session record — the one every reader
   * of a device's connection goes by (GET /status, the accept path's "connected device" check, the
   * pools' spread, the console) and whose changes are the `session.status` events: `connected`
   * with the number's digits and verified name, or `disconnected` with the reason.
   */
  async setState(deviceId: string, state: CloudDeviceState): Promise<void> {
    await this.redis.set(keys.cloudState(deviceId), JSON.stringify(state));
    if (state.status === 'connected') {
      const profile = await this.profile(deviceId);
      await this.sessions.update(deviceId, 'connected', {
        ...(profile ? { phone: cloudPhoneOf(profile), name: profile.verifiedName } : {}),
      });
    } else await this.sessions.markDisconnected(deviceId, state.reason ?? CLOUD_DISCONNECTED);
  }

  /**
   * A contact wrote to the number at `atMs` (its webhook): their 24-hour window runs from their
   * latest message (an older one redelivered never moves it back, one dated ahead of `now` counts
   * from `now`), and windows closed by now are trimmed, so the set holds open windows only.
   */
  async keepWindow(deviceId: string, waId: string, atMs: number, now = Date.now()): Promise<void> {
    const key = keys.cloudWindows(deviceId);
    await this.redis
      .multi()
      .zadd(key, 'GT', Math.min(atMs, now), waId)
      .zremrangebyscore(key, '-inf', `(${now - CLOUD_WINDOW_MS}`)
      .pexpire(key, CLOUD_WINDOW_MS)
      .exec();
  }

  /**
   * Whether this webhook delivery (the SHA-256 of its signed body) is seen for the first time
   * within the replay bound (CLOUD_WEBHOOK_SEEN_TTL_SECONDS); a replay of it answers false.
   */
  async firstDelivery(bodySha256Hex: string): Promise<boolean> {
    const key = keys.cloudWebhookSeen(bodySha256Hex);
    return (await this.redis.set(key, '1', 'EX', CLOUD_WEBHOOK_SEEN_TTL_SECONDS, 'NX')) === 'OK';
  }

  /** Forgets a delivery whose events could not be applied, so Meta's retry of it is not a replay. */
  async forgetDelivery(bodySha256Hex: string): Promise<void> {
    await this.redis.del(keys.cloudWebhookSeen(bodySha256Hex));
  }

  private async numberOf(deviceId: string): Promise<string | undefined> {
    return (await this.get(deviceId).catch(() => undefined))?.phoneNumberId;
  }

  /** Removes the index entries of `earlier` that `now` (the new configuration, if any) no longer has. */
  private async dropIndexes(
    deviceId: string,
    earlier: CloudDeviceConfig,
    now?: CloudDeviceConfig,
  ): Promise<void> {
    if (earlier.phoneNumberId !== now?.phoneNumberId) {
      const numbers = keys.cloudNumbers();
      if ((await this.redis.hget(numbers, earlier.phoneNumberId)) === deviceId)
        await this.redis.hdel(numbers, earlier.phoneNumberId);
    }
    if (earlier.verifyToken !== now?.verifyToken)
      await this.redis.srem(keys.cloudVerifyToken(sha256Hex(earlier.verifyToken)), deviceId);
  }
}
