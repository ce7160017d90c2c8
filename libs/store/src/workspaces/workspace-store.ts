import type { RedisClient } from '@mgw/common';
import { DEFAULT_WORKSPACE, WORKSPACE_ID_PATTERN, keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';
import { utcDay } from './workspace-quota.js';

/** What a workspace may hold or do at most; an absent quota is no limit (docs/workspaces.md). */
export interface WorkspaceQuotas {
  /** Devices it owns. */
  devices?: number;
  /** Messages accepted per UTC day. */
  messagesPerDay?: number;
  /** Messages accepted and not yet ended, over all its devices. */
  queuedMessages?: number;
  /** Bytes of media it keeps stored. */
  mediaBytes?: number;
}

export const QUOTA_NAMES = ['devices', 'messagesPerDay', 'queuedMessages', 'mediaBytes'] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

export const WORKSPACE_STATUSES = ['active', 'suspended'] as const;
export type WorkspaceStatus = (typeof WORKSPACE_STATUSES)[number];

/** One customer of the operator: what it owns is found by its id (docs/workspaces.md). */
export interface WorkspaceRecord {
  /** A slug (`WORKSPACE_ID_PATTERN`) chosen by the operator. */
  id: string;
  name: string;
  status: WorkspaceStatus;
  quotas: WorkspaceQuotas;
  createdAt: string;
  updatedAt: string;
}

/** The rules of a workspace's record (the admin API's schema says the same to its clients). */
export const WORKSPACE_LIMITS = { maxNameLength: 100, maxQuota: 1e12 } as const;

/**
 * What every workspace may hold at most, whatever its quotas say (docs/workspaces.md "Quotas"),
 * so that no tenant fills Redis: devices (only without a `devices` quota, which is the bound
 * then; `default` has none, it owns the install's devices from before workspaces), tokens
 * (`default`'s not counted: they are the operator's) and console users (every workspace's).
 * The API takes them from WORKSPACE_MAX_DEVICES, WORKSPACE_MAX_TOKENS and
 * WORKSPACE_MAX_CONSOLE_USERS.
 */
export interface WorkspaceCeilings {
  devices: number;
  tokens: number;
  users: number;
}

/** The ceilings' defaults. */
export const WORKSPACE_CEILINGS: WorkspaceCeilings = { devices: 1000, tokens: 1000, users: 100 };

/** Why a device could not be added to a workspace. */
export type AddDeviceRefusal = 'no_workspace' | 'quota' | 'taken';

const CREATE = storeScript<number>('workspace-create-1');
const ADD_DEVICE = storeScript<number>('workspace-add-device-2');

/**
 * Workspaces and what they own, in Redis (docs/workspaces.md). A workspace's record and its device
 * set share a slot (`{ws:<id>}`), so the device quota is checked and taken in one script; the
 * index of workspaces and the device -> workspace map are global keys. The map is the ownership:
 * a device not in it belongs to `default`, so an install from before workspaces needs no migration
 * for its devices to stay its operator's; `adopt` only lists them in default's set.
 *
 * Writes that span the global keys and a workspace's slot are ordered so that a crash in between
 * leaves nothing a tenant could use wrongly: a device is listed in its workspace's set (counted
 * against the quota) before the map names its owner, and unnamed in the map before it leaves the set.
 */
export class WorkspaceStore {
  constructor(
    private readonly redis: RedisClient,
    /** What a workspace may hold at most (`addDevice` holds `devices`; the routes the others). */
    readonly ceilings: WorkspaceCeilings = WORKSPACE_CEILINGS,
  ) {}

  /** Creates a workspace (`exists` when the id is taken; nothing changed then). */
  async create(
    input: { id: string; name: string; quotas?: WorkspaceQuotas },
    now = new Date(),
  ): Promise<WorkspaceRecord | 'exists'> {
    if (!WORKSPACE_ID_PATTERN.test(input.id)) throw new Error(`not a workspace id: ${input.id}`);
    const record: WorkspaceRecord = {
      id: input.id,
      name: input.name,
      status: 'active',
      quotas: input.quotas ?? {},
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const written = await CREATE.run(this.redis, [keys.workspace(record.id)], fields(record));
    // Also when it exists: an index entry a crash left out is added by the retry.
    await this.redis.sadd(keys.workspaceIndex(), record.id);
    return written === 1 ? record : 'exists';
  }

  /**
   * The most devices a workspace may own: its `devices` quota, else the ceiling (none for
   * `default` without a quota).
   */
  deviceLimit(w: Pick<WorkspaceRecord, 'id' | 'quotas'>): number | undefined {
    return w.quotas.devices ?? (w.id === DEFAULT_WORKSPACE ? undefined : this.ceilings.devices);
  }

  /** The most tokens a workspace may hold (`default`'s are the operator's: no bound). */
  tokenLimit(workspaceId: string): number {
    return workspaceId === DEFAULT_WORKSPACE ? Number.MAX_SAFE_INTEGER : this.ceilings.tokens;
  }

  /** The `default` workspace's record, written once (an install from before workspaces has none). */
  async ensureDefault(now = new Date()): Promise<WorkspaceRecord> {
    const made = await this.create({ id: DEFAULT_WORKSPACE, name: 'Default' }, now);
    return made === 'exists' ? (await this.get(DEFAULT_WORKSPACE))! : made;
  }

  async get(id: string): Promise<WorkspaceRecord | undefined> {
    if (!WORKSPACE_ID_PATTERN.test(id)) return undefined;
    return toRecord(await this.redis.hgetall(keys.workspace(id)));
  }

  /** Every workspace, by id. One read per workspace (on a Cluster each lives in its own slot). */
  async list(): Promise<WorkspaceRecord[]> {
    const ids = await this.redis.smembers(keys.workspaceIndex());
    const rows = await Promise.all(ids.map((id) => this.get(id)));
    return rows.filter((r): r is WorkspaceRecord => r !== undefined).sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * Changes a workspace's name, status or quotas (a quota given as `null` is removed: no limit).
   * Undefined when there is no such workspace.
   */
  async update(
    id: string,
    change: { name?: string; status?: WorkspaceStatus; quotas?: { [K in QuotaName]?: number | null } },
    now = new Date(),
  ): Promise<WorkspaceRecord | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    const set: Record<string, string> = { updatedAt: now.toISOString() };
    const removed: string[] = [];
    if (change.name !== undefined) set.name = change.name;
    if (change.status !== undefined) set.status = change.status;
    for (const name of QUOTA_NAMES) {
      const value = change.quotas?.[name];
      if (value === null) removed.push(`quota:${name}`);
      else if (value !== undefined) set[`quota:${name}`] = String(value);
    }
    const key = keys.workspace(id);
    const tx = this.redis.multi().hset(key, set);
    if (removed.length) tx.hdel(key, ...removed);
    // The day's count is kept only while `messagesPerDay` is: removed or newly set, today's goes,
    // so the next request starts it again from what the devices accepted today (always counted),
    // not from a count that stopped while there was no quota. Same slot as the record.
    const perDay = change.quotas?.messagesPerDay;
    if (perDay === null || (perDay !== undefined && current.quotas.messagesPerDay === undefined))
      tx.del(keys.workspaceDayCount(id, utcDay(now.getTime()).day));
    await tx.exec();
    await this.redis.publish(keys.workspacesChannel(), id);
    return this.get(id);
  }

  /** The workspace that owns a device: the map's entry, or `default` when it has none. */
  async workspaceOf(deviceId: string): Promise<string> {
    return (await this.redis.hget(keys.deviceWorkspaces(), deviceId)) ?? DEFAULT_WORKSPACE;
  }

  /**
   * Gives a device to a workspace within its device quota, or without one within the ceiling
   * (`ceilings.devices`; default has none: the install's own devices are its). Idempotent for the
   * same workspace; a device another workspace owns (or, for a workspace other than default, one
   * default holds already: linked or named by the map) is `taken`.
   */
  async addDevice(workspaceId: string, deviceId: string): Promise<'added' | AddDeviceRefusal> {
    const owner = await this.redis.hget(keys.deviceWorkspaces(), deviceId);
    if (owner !== null && owner !== workspaceId) return 'taken';
    if (owner === null && workspaceId !== DEFAULT_WORKSPACE && (await this.heldByDefault(deviceId))) {
      return 'taken';
    }
    const added = await ADD_DEVICE.run(
      this.redis,
      [keys.workspace(workspaceId), keys.workspaceDevices(workspaceId)],
      workspaceId === DEFAULT_WORKSPACE ? [deviceId] : [deviceId, String(this.ceilings.devices)],
    );
    if (added === -2) return 'no_workspace';
    if (added === -1) return 'quota';
    const claimed = await this.redis.hsetnx(keys.deviceWorkspaces(), deviceId, workspaceId);
    if (claimed === 0 && (await this.redis.hget(keys.deviceWorkspaces(), deviceId)) !== workspaceId) {
      // Another workspace claimed it between the check and now: give the quota's place back.
      await this.redis.srem(keys.workspaceDevices(workspaceId), deviceId);
      return 'taken';
    }
    // Processes that remember who owns a device (the API's WorkspaceCache) learn it at once.
    if (claimed === 1) await this.redis.publish(keys.workspacesChannel(), deviceId);
    return 'added';
  }

  /** Removes a device from its workspace (it then belongs to nobody but default's operator). */
  async removeDevice(workspaceId: string, deviceId: string): Promise<boolean> {
    const owner = await this.workspaceOf(deviceId);
    if (owner !== workspaceId) return false;
    if (workspaceId !== DEFAULT_WORKSPACE) await this.redis.hdel(keys.deviceWorkspaces(), deviceId);
    const removed = (await this.redis.srem(keys.workspaceDevices(workspaceId), deviceId)) === 1;
    await this.redis.publish(keys.workspacesChannel(), deviceId);
    return removed;
  }

  /**
   * Whether a workspace owns a device by its set (one SISMEMBER); default also owns every linked
   * device no workspace names, listed or not (see `devices`).
   */
  async hasDevice(workspaceId: string, deviceId: string): Promise<boolean> {
    if ((await this.redis.sismember(keys.workspaceDevices(workspaceId), deviceId)) === 1) return true;
    if (workspaceId !== DEFAULT_WORKSPACE) return false;
    const [linked, owner] = await Promise.all([
      this.redis.sismember(keys.linkedDevices(), deviceId),
      this.redis.hget(keys.deviceWorkspaces(), deviceId),
    ]);
    return linked === 1 && owner === null;
  }

  /**
   * The devices a workspace owns, by id: those its set lists (`addDevice`, `adopt`), and for
   * `default` also every linked device no workspace names — one linked since the API started
   * (`adopt` lists the linked ones at start only) is default's all the same.
   */
  async devices(workspaceId: string): Promise<string[]> {
    const listed = await this.redis.smembers(keys.workspaceDevices(workspaceId));
    if (workspaceId !== DEFAULT_WORKSPACE) return listed.sort();
    const known = new Set(listed);
    const unlisted = (await this.redis.smembers(keys.linkedDevices())).filter((id) => !known.has(id));
    if (unlisted.length === 0) return listed.sort();
    const owners = await this.redis.hmget(keys.deviceWorkspaces(), ...unlisted);
    return [...listed, ...unlisted.filter((_, i) => owners[i] === null)].sort();
  }

  /**
   * Lists under `default` the devices an install from before workspaces has (the linked ones and
   * the given ones, e.g. those its tokens name) that no workspace owns. Idempotent; run at start.
   */
  async adopt(extraDeviceIds: Iterable<string> = []): Promise<number> {
    await this.ensureDefault();
    const linked = await this.redis.smembers(keys.linkedDevices());
    const candidates = [...new Set([...linked, ...extraDeviceIds])];
    if (candidates.length === 0) return 0;
    const owners = await this.redis.hmget(keys.deviceWorkspaces(), ...candidates);
    const orphans = candidates.filter((_, i) => owners[i] === null);
    if (orphans.length === 0) return 0;
    return this.redis.sadd(keys.workspaceDevices(DEFAULT_WORKSPACE), ...orphans);
  }

  /** Whether default holds a device no map entry names: listed, linked, or with a session record. */
  private async heldByDefault(deviceId: string): Promise<boolean> {
    const [listed, linked, session] = await Promise.all([
      this.redis.sismember(keys.workspaceDevices(DEFAULT_WORKSPACE), deviceId),
      this.redis.sismember(keys.linkedDevices(), deviceId),
      this.redis.exists(keys.session(deviceId)),
    ]);
    return listed === 1 || linked === 1 || session === 1;
  }
}

function fields(r: WorkspaceRecord): string[] {
  const out = [
    'id',
    r.id,
    'name',
    r.name,
    'status',
    r.status,
    'createdAt',
    r.createdAt,
    'updatedAt',
    r.updatedAt,
  ];
  for (const name of QUOTA_NAMES) {
    const v = r.quotas[name];
    if (v !== undefined) out.push(`quota:${name}`, String(v));
  }
  return out;
}

function toRecord(h: Record<string, string>): WorkspaceRecord | undefined {
  if (!h.id || !h.name || !h.createdAt) return undefined;
  const quotas: WorkspaceQuotas = {};
  for (const name of QUOTA_NAMES) {
    const v = h[`quota:${name}`];
    if (v !== undefined && Number.isFinite(Number(v))) quotas[name] = Number(v);
  }
  return {
    id: h.id,
    name: h.name,
    status: h.status === 'suspended' ? 'suspended' : 'active',
    quotas,
    createdAt: h.createdAt,
    updatedAt: h.updatedAt ?? h.createdAt,
  };
}
