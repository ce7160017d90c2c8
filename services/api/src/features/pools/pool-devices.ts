import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import {
  HEALTH_LOW_SCORE,
  deviceHealth,
  parseDeviceState,
  readDeviceState,
  sendingView,
  type SendPolicyConfig,
} from '@mgw/store';

/** Why a device of a pool takes no new share of a batch now (and its waiting messages move). */
export type DropReason = 'not_linked' | 'restricted' | 'daily_cap' | 'low_health' | 'no_nct_salt';

/**
 * The auth-key type a device keeps the account's NCT salt under (libs/messenger nct-salt.ts
 * `NCT_SALT_TYPE`, field `salt`, sealed): only whether it is there is read here.
 */
const NCT_SALT_TYPE = 'nct-salt';

/** One device of a pool as a pooled send and the mover see it. */
export interface PoolDevice {
  deviceId: string;
  /** Linked (connected or reconnecting): it can hold messages, even if it may not send them now. */
  linked: boolean;
  /** Why it is out of the pool's spread now; undefined: it takes its share. */
  dropped?: DropReason;
  /** Its share of new messages: what it may still send today (a day without a cap: a day's worth), by its health. */
  weight: number;
  health: number;
}

/** What a device without a daily cap counts as being able to send in a day, for the balance. */
const UNCAPPED_ALLOWANCE = 10_000;

/**
 * The devices of a pool now: linked or not, paused (time-locked, capped, pushed back), at their
 * daily cap (they sent what they may today), or below the pool's health floor — and what each may
 * still send beyond what it holds, which is how a batch is spread over them.
 *
 * A device without the account's NCT salt sends a first contact without a token (WhatsApp may
 * refuse it, 463: docs/contacts-and-identities.md): while another device of the pool in the spread
 * holds its salt, it is left out (`no_nct_salt`) and its waiting messages move to one that has it,
 * until it gets its own (it asks for it when its socket opens). When none holds one, nothing changes.
 * A Cloud API device is out of this rule: the salt is the linked protocol's.
 */
export async function poolDevices(
  redis: RedisClient,
  devices: string[],
  policy: SendPolicyConfig,
  minHealth = HEALTH_LOW_SCORE,
  now = Date.now(),
): Promise<PoolDevice[]> {
  const [states, salted, cloud] = await Promise.all([
    devicesNow(redis, devices, policy, minHealth, now),
    Promise.all(
      devices.map(async (d) => (await redis.hexists(keys.authKeys(d, NCT_SALT_TYPE), 'salt')) === 1),
    ),
    // A Cloud API device needs no salt (Meta sends its first contacts, as templates): it never drops
    // out for one, nor makes a linked device without one drop out.
    Promise.all(devices.map(async (d) => (await redis.exists(keys.cloudDevice(d))) === 1)),
  ]);
  if (!states.some((d, i) => !d.dropped && salted[i])) return states;
  return states.map((d, i) =>
    d.dropped || salted[i] || cloud[i] ? d : { ...d, dropped: 'no_nct_salt' as const, weight: 0 },
  );
}

async function devicesNow(
  redis: RedisClient,
  devices: string[],
  policy: SendPolicyConfig,
  minHealth: number,
  now: number,
): Promise<PoolDevice[]> {
  return Promise.all(
    devices.map(async (deviceId): Promise<PoolDevice> => {
      const state = parseDeviceState((await readDeviceState(redis.multi(), deviceId).exec()) ?? []);
      const view = await sendingView(redis, deviceId, policy, now);
      const health = (await deviceHealth(redis, deviceId, policy, now, view)).score;
      // At its cap when it sent what it may today; what it holds already only lowers its share of
      // new messages (it may send those today), so its queue never moves away for it.
      const sendable = view.dailyCap === null ? UNCAPPED_ALLOWANCE : view.dailyCap - view.sentToday;
      const left = sendable - state.queuedMessages;
      const dropped: DropReason | undefined = !state.acceptsMessages
        ? 'not_linked'
        : view.restriction
          ? 'restricted'
          : sendable <= 0
            ? 'daily_cap'
            : health < minHealth
              ? 'low_health'
              : undefined;
      return {
        deviceId,
        linked: state.acceptsMessages,
        ...(dropped ? { dropped } : {}),
        weight: dropped ? 0 : Math.max(1, left) * (health / 100),
        health,
      };
    }),
  );
}

/** The devices of a pool (its definition), or undefined when there is no such pool. */
export async function poolMembers(redis: RedisClient, poolId: string): Promise<string[] | undefined> {
  const devices = await redis.hget(keys.pool(poolId), 'devices');
  return devices ? (JSON.parse(devices) as string[]) : undefined;
}

/**
 * Spreads `count` more messages over `devices` by weight, in order (each next message goes to the
 * device furthest below its fair part), counting what each already got (`given`).
 */
export function spread(devices: PoolDevice[], given: Map<string, number>, count: number): string[] {
  const out: string[] = [];
  const got = new Map(devices.map((d) => [d.deviceId, given.get(d.deviceId) ?? 0]));
  for (let i = 0; i < count; i++) {
    let best: PoolDevice | undefined;
    let bestScore = -1;
    for (const d of devices) {
      const score = d.weight / (got.get(d.deviceId)! + 1);
      if (score > bestScore) [best, bestScore] = [d, score];
    }
    got.set(best!.deviceId, got.get(best!.deviceId)! + 1);
    out.push(best!.deviceId);
  }
  return out;
}
