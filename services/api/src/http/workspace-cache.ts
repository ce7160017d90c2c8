import type { Logger, RedisClient, Subscription } from '@mgw/common';
import { startInvalidations } from './invalidations.js';
import { DEFAULT_WORKSPACE, keys } from '@mgw/contracts';
import type { PoolStore, WorkspaceRecord, WorkspaceStore } from '@mgw/store';

interface Entry {
  record: WorkspaceRecord | undefined;
  until: number;
}

/**
 * The workspaces' records, remembered so that a request does not pay a Redis round trip to learn
 * whether its workspace is suspended (docs/workspaces.md). A change is published on
 * `keys.workspacesChannel()` (WorkspaceStore.update) and drops the record here at once; while this
 * process is not subscribed the cache is not used, as the token cache does (token-cache.ts). Who
 * owns a device is remembered the same way: a device given to a workspace is published on the same
 * channel (WorkspaceStore.addDevice), so a send's quota check pays no round trip to learn it; and
 * whose a pool is (a pool created or deleted is published there too: PoolStore), for a pool token's
 * request and the console's scope (docs/workspaces.md "The console").
 */
export class WorkspaceCache {
  private readonly entries = new Map<string, Entry>();
  private readonly owners = new Map<string, { owner: string; until: number }>();
  private readonly poolOwners = new Map<string, { owner: string | undefined; until: number }>();
  private subscription?: Subscription;
  /** Bumped by every change heard: a lookup that overlapped one is not cached. */
  private changes = 0;

  constructor(
    private readonly store: Pick<WorkspaceStore, 'get' | 'workspaceOf'>,
    private readonly subscriber: RedisClient,
    private readonly logger: Logger,
    /** Whose a pool is (PoolStore.workspaceOf); absent: every pool is default's. */
    private readonly pools?: Pick<PoolStore, 'workspaceOf'>,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: 30_000, maxEntries: 10_000 },
  ) {}

  async start(): Promise<void> {
    this.subscription = await startInvalidations({
      subscriber: this.subscriber,
      channel: keys.workspacesChannel(),
      // A workspace's id, a device's or a pool's: ids of each kind are slugs, so every map drops it.
      drop: (id) => {
        this.changes++;
        this.entries.delete(id);
        this.owners.delete(id);
        this.poolOwners.delete(id);
      },
      dropAll: () => {
        this.changes++;
        this.entries.clear();
        this.owners.clear();
        this.poolOwners.clear();
      },
      logger: this.logger,
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }

  /** A workspace's record (undefined: no such workspace), from the cache while subscribed. */
  async get(id: string, now = Date.now()): Promise<WorkspaceRecord | undefined> {
    const subscribed = this.subscription?.subscribed ?? false;
    const hit = subscribed ? this.entries.get(id) : undefined;
    if (hit && hit.until > now) return hit.record;
    const before = this.changes;
    const record = await this.store.get(id);
    if (subscribed && before === this.changes) {
      if (this.entries.size >= this.opts.maxEntries) this.entries.clear();
      this.entries.set(id, { record, until: now + this.opts.ttlMs });
    }
    return record;
  }

  /** The workspace that owns a device (`default` when no workspace names it), cached while subscribed. */
  async ownerOf(deviceId: string, now = Date.now()): Promise<string> {
    const subscribed = this.subscription?.subscribed ?? false;
    const hit = subscribed ? this.owners.get(deviceId) : undefined;
    if (hit && hit.until > now) return hit.owner;
    const before = this.changes;
    const owner = await this.store.workspaceOf(deviceId);
    if (subscribed && before === this.changes) {
      if (this.owners.size >= this.opts.maxEntries) this.owners.clear();
      this.owners.set(deviceId, { owner, until: now + this.opts.ttlMs });
    }
    return owner;
  }

  /** The workspace a pool belongs to (undefined: no such pool), cached while subscribed. */
  async poolOwner(poolId: string, now = Date.now()): Promise<string | undefined> {
    if (!this.pools) return DEFAULT_WORKSPACE;
    const subscribed = this.subscription?.subscribed ?? false;
    const hit = subscribed ? this.poolOwners.get(poolId) : undefined;
    if (hit && hit.until > now) return hit.owner;
    const before = this.changes;
    const owner = await this.pools.workspaceOf(poolId);
    if (subscribed && before === this.changes) {
      if (this.poolOwners.size >= this.opts.maxEntries) this.poolOwners.clear();
      this.poolOwners.set(poolId, { owner, until: now + this.opts.ttlMs });
    }
    return owner;
  }
}
