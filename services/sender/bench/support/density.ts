/**
 * What the density bench (density.bench.ts) reads besides the senders' /metrics: who holds each
 * device's lease and since when each is connected (Redis), what Redis spends per key family, and
 * a process's traffic (/proc). Every read is pipelined: thousands of devices, a few round trips.
 */
import { readFileSync } from 'node:fs';
import { keys } from '@mgw/contracts';
import type { Redis } from 'ioredis';

/** Pipelined reads of one field per device, in chunks (a pipeline of 10,000 is fine; 100,000 is not). */
async function perDevice<T>(
  redis: Redis,
  deviceIds: readonly string[],
  read: (pipe: ReturnType<Redis['pipeline']>, deviceId: string) => void,
  parse: (raw: unknown) => T,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < deviceIds.length; i += 5000) {
    const pipe = redis.pipeline();
    for (const id of deviceIds.slice(i, i + 5000)) read(pipe, id);
    for (const [, raw] of (await pipe.exec()) ?? []) out.push(parse(raw));
  }
  return out;
}

/** The pid of each device's lease holder ('' when none holds it). */
export function holders(redis: Redis, deviceIds: readonly string[]): Promise<string[]> {
  return perDevice(
    redis,
    deviceIds,
    (pipe, id) => pipe.get(keys.lease(id)),
    (raw) =>
      raw ? (/:(\d+):/.exec((JSON.parse(raw as string) as { owner: string }).owner)?.[1] ?? '?') : '',
  );
}

/** How many devices each pid holds. */
export function countBy(pids: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of pids) m.set(p, (m.get(p) ?? 0) + 1);
  return m;
}

/** Each device's session: its status and when it last became `connected` (ms, 0 if never). */
export function sessions(
  redis: Redis,
  deviceIds: readonly string[],
): Promise<{ status: string; connectedAt: number }[]> {
  return perDevice(
    redis,
    deviceIds,
    (pipe, id) => pipe.hmget(keys.session(id), 'status', 'connectedAt'),
    (raw) => {
      const [status, at] = raw as [string | null, string | null];
      return { status: status ?? '', connectedAt: at ? Date.parse(at) : 0 };
    },
  );
}

/**
 * The most connects that landed in any window of `windowMs` (a sliding window over the sorted
 * times), and the time from the first to the last.
 */
export function peakRate(times: readonly number[], windowMs: number): { peak: number; spanMs: number } {
  const t = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= windowMs) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return { peak, spanMs: t.length ? t[t.length - 1]! - t[0]! : 0 };
}

/** A key's family: its device id and every run of digits replaced, so that families group. */
function familyOf(key: string, deviceIds: ReadonlySet<string>): string {
  const m = /\{([^}]+)\}/.exec(key);
  const dev = m && deviceIds.has(m[1]!) ? key.replace(`{${m[1]}}`, '{dev}') : key;
  return dev.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uuid>').replace(/\d+/g, '#');
}

export interface FamilyUsage {
  family: string;
  keys: number;
  /** Estimated bytes: the sampled keys' mean MEMORY USAGE × the family's keys. */
  bytes: number;
  /** Keys of the family with no TTL. */
  persistent: number;
}

/**
 * What Redis holds, by key family: every key scanned, `samples` of each family measured with
 * MEMORY USAGE (and checked for a TTL), the family's bytes estimated from their mean.
 */
export async function keyFamilies(
  redis: Redis,
  deviceIds: ReadonlySet<string>,
  samples = 40,
): Promise<FamilyUsage[]> {
  const byFamily = new Map<string, string[]>();
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'COUNT', 5000);
    cursor = next;
    for (const k of found) {
      const f = familyOf(k, deviceIds);
      const list = byFamily.get(f) ?? byFamily.set(f, []).get(f)!;
      list.push(k);
    }
  } while (cursor !== '0');
  const out: FamilyUsage[] = [];
  for (const [family, list] of byFamily) {
    const sample =
      list.length <= samples ? list : list.filter((_, i) => i % Math.ceil(list.length / samples) === 0);
    const pipe = redis.pipeline();
    for (const k of sample) pipe.memory('USAGE', k, 'SAMPLES', 0).pttl(k);
    const answers = ((await pipe.exec()) ?? []).map(([, v]) => Number(v));
    let bytes = 0;
    let persistent = 0;
    for (let i = 0; i < sample.length; i++) {
      bytes += answers[2 * i]!;
      if (answers[2 * i + 1] === -1) persistent++;
    }
    out.push({
      family,
      keys: list.length,
      bytes: (bytes / sample.length) * list.length,
      persistent: Math.round((persistent / sample.length) * list.length),
    });
  }
  return out.sort((a, b) => b.bytes - a.bytes);
}

/** A process's reads and writes so far (bytes, all file descriptors: for the simulator, its sockets). */
export function procIo(pid: number): { read: number; written: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return {
    read: Number(/^rchar:\s+(\d+)/m.exec(io)?.[1] ?? 0),
    written: Number(/^wchar:\s+(\d+)/m.exec(io)?.[1] ?? 0),
  };
}

/** Fields of one INFO section, as numbers where they are. */
export async function info(redis: Redis, section: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const line of (await redis.info(section)).split('\r\n')) {
    const [k, v] = line.split(':');
    if (k && v !== undefined && v !== '' && !Number.isNaN(Number(v))) out[k] = Number(v);
  }
  return out;
}

export const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
export const kib = (bytes: number) => (bytes / 1024).toFixed(1);
export const secs = (ms: number) => (ms / 1000).toFixed(1);
