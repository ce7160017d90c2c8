/**
 * What a linked, idle account costs in Redis (issue 55): link N accounts in sandbox through the
 * whole stack, let them settle, and read Redis `INFO memory` `used_memory` before and after, plus
 * a breakdown of one account's keys by family (`MEMORY USAGE` of each key, grouped by what the key
 * builders of @mgw/contracts `keys` put after the device's hash tag). Used by the guard test
 * (test/e2e/redis-per-account.test.ts) and usable from a bench.
 */
import type { Cluster, Redis } from 'ioredis';
import { waitFor } from './net.js';
import type { Stack } from './stack.js';

export interface KeyFamily {
  /** `auth:keys:pre-key`, `auth:creds`, `session`, `msg`, … (the key minus `mgw:{<deviceId>}:`). */
  family: string;
  keys: number;
  /** Sum of `MEMORY USAGE <key> SAMPLES 0` (bytes). */
  bytes: number;
  /** Hash fields (or 0 for other types). */
  fields: number;
  /** Keys of the family without a TTL. */
  withoutTtl: number;
}

export interface AccountFootprint {
  accounts: number;
  /** `used_memory` after linking minus before, over the accounts (bytes). */
  usedMemoryPerAccount: number;
  /**
   * `usedMemoryPerAccount` without the client connections' buffers (`mem_clients_normal`): what
   * the server keeps for the accounts. The buffers come and go with the traffic of the moment
   * (-3 to +32 KiB per account between runs of 4 accounts), the rest is steady (±0.2 KiB).
   */
  keptPerAccount: number;
  /**
   * Parts of that figure per account that are not the account's keys: Lua scripts loaded on first
   * use (once per server), client connections' buffers; `dataset` is used_memory minus overhead.
   */
  overheadPerAccount: { scripts: number; clients: number; dataset: number };
  /** The breakdown of the first account's keys, largest family first. */
  families: KeyFamily[];
  /** Sum of the families (bytes): what that account's own keys hold. */
  deviceKeysBytes: number;
}

type AnyRedis = Redis | Cluster;

export async function usedMemory(redis: AnyRedis): Promise<number> {
  return (await memoryInfo(redis)).used_memory!;
}

/** The numeric fields of `INFO memory` (used_memory, used_memory_scripts, mem_clients_normal, …). */
export async function memoryInfo(redis: AnyRedis): Promise<Record<string, number>> {
  const info = await (redis as Redis).info('memory');
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^(\w+):(\d+)\r?$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** Every key of a device (they all carry its hash tag `{deviceId}`; its send queue's too). */
export async function deviceKeys(redis: AnyRedis, deviceId: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await (redis as Redis).scan(cursor, 'MATCH', `mgw:*{${deviceId}}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found.sort();
}

/** A key's family: the auth key type kept whole, any other key cut at its first variable part. */
export function familyOf(key: string, deviceId: string): string {
  const own = `mgw:{${deviceId}}:`;
  // The send queue's (BullMQ) keys: `mgw:bull:send-{id}:meta` -> `bull:send:meta`.
  if (!key.startsWith(own))
    return key.slice(4).replace(`-{${deviceId}}`, '').replace(`{${deviceId}}`, '{id}');
  const rest = key.slice(own.length);
  if (rest.startsWith('auth:')) return rest;
  return rest.split(':')[0]!;
}

export async function keyBreakdown(redis: AnyRedis, deviceId: string): Promise<KeyFamily[]> {
  const r = redis as Redis;
  const byFamily = new Map<string, KeyFamily>();
  for (const key of await deviceKeys(redis, deviceId)) {
    const family = familyOf(key, deviceId);
    const f = byFamily.get(family) ?? { family, keys: 0, bytes: 0, fields: 0, withoutTtl: 0 };
    byFamily.set(family, f);
    f.keys++;
    f.bytes += Number((await r.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    if ((await r.type(key)) === 'hash') f.fields += await r.hlen(key);
    if ((await r.pttl(key)) === -1) f.withoutTtl++;
  }
  return [...byFamily.values()].sort((a, b) => b.bytes - a.bytes);
}

/**
 * Waits until the device's keys stop changing (their count and total size the same for `quietMs`):
 * the link's pre-key upload, app-state and history sync are done, the account is idle.
 */
export async function waitIdle(redis: AnyRedis, deviceId: string, quietMs = 3_000): Promise<void> {
  let last = '';
  let since = Date.now();
  await waitFor(
    async () => {
      const families = await keyBreakdown(redis, deviceId);
      const now = JSON.stringify(families.map((f) => [f.family, f.keys, f.fields]));
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since >= quietMs;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: `device ${deviceId} idle in Redis` },
  );
}

/**
 * Links `n` accounts (fresh devices, phones `<phoneBase><i>`) by QR through the stack, waits for
 * each to be idle, and measures. `used_memory` counts the whole server: run it on a stack of its
 * own (`privateRedis`) with nothing else going on.
 */
export async function measureLinkedAccounts(
  stack: Stack,
  n: number,
  phoneBase = '1555077',
): Promise<AccountFootprint & { deviceIds: string[] }> {
  const redis = stack.redis;
  // One account first, not counted: what the first link costs once per server (the Lua scripts
  // loaded on first use, the sender's connections and their buffers, the queues' shared keys) is
  // not what each account costs.
  const warmId = `footprint-warm-${Math.random().toString(36).slice(2, 8)}`;
  await stack.linkByQr(`${phoneBase}9999`, 'Footprint warm-up', await stack.createToken(warmId));
  await waitIdle(redis, warmId);
  const deviceIds: string[] = [];
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `footprint-${i}-${Math.random().toString(36).slice(2, 8)}`;
    deviceIds.push(id);
    tokens.push(await stack.createToken(id));
  }
  // Tokens and their index are there before the first reading: the figure is the linked account's.
  const before = await memoryInfo(redis);
  for (let i = 0; i < n; i++) {
    await stack.linkByQr(`${phoneBase}${String(i).padStart(4, '0')}`, `Footprint ${i}`, tokens[i]);
  }
  for (const id of deviceIds) await waitIdle(redis, id);
  const after = await memoryInfo(redis);
  const families = await keyBreakdown(redis, deviceIds[0]!);
  const delta = (field: string) => Math.round(((after[field] ?? 0) - (before[field] ?? 0)) / n);
  return {
    deviceIds,
    accounts: n,
    usedMemoryPerAccount: delta('used_memory'),
    keptPerAccount: delta('used_memory') - delta('mem_clients_normal'),
    overheadPerAccount: {
      scripts: delta('used_memory_scripts'),
      clients: delta('mem_clients_normal'),
      dataset: delta('used_memory_dataset'),
    },
    families,
    deviceKeysBytes: families.reduce((s, f) => s + f.bytes, 0),
  };
}

/** The breakdown as a table for a log line or a bench's output. */
export function formatFootprint(f: AccountFootprint): string {
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  const rows = f.families.map(
    (x) =>
      `  ${x.family.padEnd(34)} ${String(x.keys).padStart(3)} key(s) ${String(x.fields).padStart(5)} field(s) ${kib(x.bytes).padStart(11)}${x.withoutTtl ? `  (${x.withoutTtl} without TTL)` : ''}`,
  );
  return [
    `used_memory per linked idle account: ${kib(f.usedMemoryPerAccount)} (${f.accounts} accounts), without client buffers ${kib(f.keptPerAccount)}`,
    `  of which scripts ${kib(f.overheadPerAccount.scripts)}, clients ${kib(f.overheadPerAccount.clients)}, dataset ${kib(f.overheadPerAccount.dataset)}`,
    `one account's keys: ${kib(f.deviceKeysBytes)}`,
    ...rows,
  ].join('\n');
}
