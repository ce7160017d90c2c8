import type { RedisClient } from '@mgw/common';
import {
  DEFAULT_WORKSPACE,
  DEVICE_ID_PATTERN,
  POOL_ID_PATTERN,
  WORKSPACE_ID_PATTERN,
  keys,
} from '@mgw/contracts';
import { storeScript } from '../lua.js';

/** A pool: a named set of devices over which one batch is spread (docs/pools.md). */
export interface PoolRecord {
  /** A slug chosen by the operator (`POOL_ID_PATTERN`): it appears in keys and metric labels. */
  id: string;
  name: string;
  /** Distinct device ids, in the order the operator gave them; a device may be in several pools. */
  devices: string[];
  /**
   * The workspace the pool belongs to (docs/workspaces.md "The console"): its devices are that
   * workspace's, and only that workspace's tokens send through it. A pool written before pools had
   * a workspace has none in Redis and is `default`'s (read so: no migration).
   */
  workspace: string;
  /**
   * An OTP to one of the pool's linked devices while WhatsApp pauses or restricts it goes out
   * through the pool's connected Cloud API device instead (docs/cloud-api.md "Pools and fallback").
   * Off unless the operator turns it on; a pool written before has none (read as off).
   */
  otpFallback: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The rules of a pool's definition (the admin API's schema says the same to its clients). */
export const POOL_LIMITS = { maxNameLength: 64, minDevices: 1, maxDevices: 100 } as const;

/** A definition the rules refuse; `field` is the one at fault. */
export class PoolInputError extends Error {
  override name = 'PoolInputError';
  constructor(
    readonly field: 'id' | 'name' | 'devices' | 'workspace',
    message: string,
  ) {
    super(message);
  }
}

const CREATE = storeScript<number>('pool-create-1');
const UPDATE = storeScript<string[]>('pool-update-1');

/**
 * Pool definitions: one hash per pool (`keys.pool`, its own slot) and the set of every pool id
 * (`keys.poolIndex`). The two live in different Cluster slots, so no one script writes both: the
 * definition is written first, by a script that refuses an existing id, then the index entry.
 * A crash in between leaves a pool the list does not show; creating it again answers `exists`
 * and adds the missing entry, so the operator's retry repairs it. Pools are few (tens), so the
 * list reads every definition. A pool created or deleted is published on `keys.workspacesChannel()`
 * (its id): the API caches whose pool is whose (http/workspace-cache.ts).
 */
export class PoolStore {
  constructor(private readonly redis: RedisClient) {}

  /** Writes a new pool; `exists` (nothing changed) when a pool of that id is there. */
  async create(
    input: { id: string; name: string; devices: string[]; workspace?: string; otpFallback?: boolean },
    now = new Date(),
  ): Promise<PoolRecord | 'exists'> {
    checkId(input.id);
    const workspace = input.workspace ?? DEFAULT_WORKSPACE;
    if (!WORKSPACE_ID_PATTERN.test(workspace)) throw new PoolInputError('workspace', 'not a workspace id');
    const record: PoolRecord = {
      id: input.id,
      name: checkName(input.name),
      devices: checkDevices(input.devices),
      workspace,
      otpFallback: input.otpFallback === true,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const written = await CREATE.run(this.redis, [keys.pool(record.id)], fields(record));
    // Also when it exists: an entry a crash left out is added by the retry.
    await this.redis.sadd(keys.poolIndex(), record.id);
    if (written === 1) await this.redis.publish(keys.workspacesChannel(), record.id);
    return written === 1 ? record : 'exists';
  }

  async get(id: string): Promise<PoolRecord | undefined> {
    if (!POOL_ID_PATTERN.test(id)) return undefined;
    return toRecord(await this.redis.hgetall(keys.pool(id)));
  }

  /** The workspace a pool belongs to (`default` for a pool from before); undefined: no such pool. */
  async workspaceOf(id: string): Promise<string | undefined> {
    if (!POOL_ID_PATTERN.test(id)) return undefined;
    const [exists, workspace] = await this.redis.hmget(keys.pool(id), 'id', 'workspace');
    return exists === null ? undefined : (workspace ?? DEFAULT_WORKSPACE);
  }

  /** Every pool, by id. One read per pool, not a pipeline: on a Cluster each lives in its own slot. */
  async list(): Promise<PoolRecord[]> {
    const ids = await this.redis.smembers(keys.poolIndex());
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((p): p is PoolRecord => p !== undefined).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Changes the name, the devices or the OTP fallback; undefined when there is no such pool. */
  async update(
    id: string,
    change: { name?: string; devices?: string[]; otpFallback?: boolean },
    now = new Date(),
  ): Promise<PoolRecord | undefined> {
    if (!POOL_ID_PATTERN.test(id)) return undefined;
    const set: string[] = ['updatedAt', now.toISOString()];
    if (change.name !== undefined) set.push('name', checkName(change.name));
    if (change.devices !== undefined) set.push('devices', JSON.stringify(checkDevices(change.devices)));
    if (change.otpFallback !== undefined) set.push('otpFallback', change.otpFallback ? '1' : '0');
    const flat = await UPDATE.run(this.redis, [keys.pool(id)], set);
    const h: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    return toRecord(h);
  }

  /**
   * Deletes a pool: the definition first (the pool is gone for every reader at once), then its
   * index entry; false when there was neither. Its stickiness and batches are the sending's to end.
   */
  async delete(id: string): Promise<boolean> {
    if (!POOL_ID_PATTERN.test(id)) return false;
    const removed = await this.redis.del(keys.pool(id));
    const unlisted = await this.redis.srem(keys.poolIndex(), id);
    // Whose pool it was is forgotten at once (an id may come back as another workspace's pool).
    if (removed > 0) await this.redis.publish(keys.workspacesChannel(), id);
    return removed + unlisted > 0;
  }

  /** The ids of the pools that hold the device, by id. */
  async poolsOfDevice(deviceId: string): Promise<string[]> {
    return (await this.list()).filter((p) => p.devices.includes(deviceId)).map((p) => p.id);
  }
}

function fields(p: PoolRecord): string[] {
  return [
    'id',
    p.id,
    'name',
    p.name,
    'devices',
    JSON.stringify(p.devices),
    'workspace',
    p.workspace,
    'otpFallback',
    p.otpFallback ? '1' : '0',
    'createdAt',
    p.createdAt,
    'updatedAt',
    p.updatedAt,
  ];
}

function toRecord(h: Record<string, string>): PoolRecord | undefined {
  if (!h.id || !h.createdAt || !h.devices) return undefined;
  let devices: unknown;
  try {
    devices = JSON.parse(h.devices);
  } catch {
    return undefined;
  }
  if (!Array.isArray(devices)) return undefined;
  return {
    id: h.id,
    name: h.name ?? '',
    devices: devices.filter((d): d is string => typeof d === 'string'),
    workspace: h.workspace ?? DEFAULT_WORKSPACE,
    otpFallback: h.otpFallback === '1',
    createdAt: h.createdAt,
    updatedAt: h.updatedAt ?? h.createdAt,
  };
}

function checkId(id: string): void {
  if (typeof id !== 'string' || !POOL_ID_PATTERN.test(id))
    throw new PoolInputError(
      'id',
      'a pool id is 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
    );
}

function checkName(name: string): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed.length < 1 || trimmed.length > POOL_LIMITS.maxNameLength)
    throw new PoolInputError('name', `a pool name is 1-${POOL_LIMITS.maxNameLength} characters`);
  return trimmed;
}

function checkDevices(devices: string[]): string[] {
  if (
    !Array.isArray(devices) ||
    devices.length < POOL_LIMITS.minDevices ||
    devices.length > POOL_LIMITS.maxDevices
  )
    throw new PoolInputError(
      'devices',
      `a pool holds ${POOL_LIMITS.minDevices}-${POOL_LIMITS.maxDevices} devices`,
    );
  if (devices.some((d) => typeof d !== 'string' || !DEVICE_ID_PATTERN.test(d)))
    throw new PoolInputError('devices', 'every device of a pool is a device id');
  if (new Set(devices).size !== devices.length)
    throw new PoolInputError('devices', 'a device is in a pool once');
  return [...devices];
}
