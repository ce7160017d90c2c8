import { createMetrics } from '@mgw/contracts';
import type { ContactAnswer } from '@mgw/store';
import { MemoryLookupCap, type DeviceHolder } from '../test-support.js';
import type { AccountRedis } from './account-deps.js';
import type { ContactLookups } from './contact-lookups.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): what the account use cases' fast
 * tests (`<use-case>.test.ts` beside each) share — the Redis they write themselves, the account's
 * profile and a photo, and the lookups that reaching another person counts.
 */

/** The Redis the account's use cases write themselves: hashes and expiring values, in memory. */
export class MemoryAccountRedis implements AccountRedis {
  readonly hashes = new Map<string, Record<string, string>>();
  readonly values = new Map<string, { value: Buffer; ttl: number }>();
  async hmget(key: string, ...fields: string[]) {
    const h = this.hashes.get(key) ?? {};
    return fields.map((f) => h[f] ?? null);
  }
  async hset(key: string, values: Record<string, string>) {
    const h = this.hashes.get(key) ?? {};
    const added = Object.keys(values).filter((f) => !(f in h)).length;
    this.hashes.set(key, { ...h, ...values });
    return added;
  }
  async set(key: string, value: Buffer, _expiry: 'EX', seconds: number) {
    this.values.set(key, { value, ttl: seconds });
    return 'OK';
  }
  async del(key: string) {
    return Number(this.values.delete(key) || this.hashes.delete(key));
  }
}

/** The account's profile as the holder answers it. */
export const profile = { phone: '15550001111', name: 'Shop', about: 'Open 9-5' };

/** A PNG's bytes: what a photo given as base64 decodes to. */
export const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64, 7)]);

/** Another person, as the holder names them. */
export const contact = { phone: '15551234567' };

/**
 * What reaching another person takes: the holder, the device's contact cache (`cached`: what the
 * number check kept) and the daily lookup cap (0: no cap, reset in an hour).
 */
export function contactDeps(
  holder: DeviceHolder,
  cached: Map<string, ContactAnswer>,
  lookupsPerDay = 0,
): ContactLookups & { holder: DeviceHolder } {
  return {
    holder,
    metrics: createMetrics(),
    cache: {
      getMany: async (_d, phones) =>
        new Map(phones.flatMap((p) => (cached.has(p) ? [[p, cached.get(p)!]] : []))),
    },
    lookups: new MemoryLookupCap(lookupsPerDay),
  };
}

/** The lookups counted, by outcome (`looked_up`, `capped`). */
export const lookups = async (deps: ContactLookups) =>
  Object.fromEntries(
    (await deps.metrics.contactLookups.get()).values.map((v) => [v.labels.outcome, v.value]),
  );
