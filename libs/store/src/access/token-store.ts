import type { RedisClient } from '@mgw/common';
import { hash, timingSafeEqual } from 'node:crypto';
import {
  DEFAULT_WORKSPACE,
  keys,
  newAdminTokenId,
  newAdminTokenValue,
  newTokenId,
  newTokenValue,
} from '@mgw/contracts';
import { storeScript } from '../lua.js';

/** What is stored about a token: never its value, only the SHA-256 of it. */
export interface TokenRecord {
  id: string;
  name: string;
  /** The device this token acts on; absent (and no `poolId`) = the default device. */
  deviceId?: string;
  /** The pool this token sends through (docs/pools.md); never with `deviceId`. */
  poolId?: string;
  /**
   * The workspace the token belongs to (docs/workspaces.md); absent = `default`. A token with
   * neither `deviceId` nor `poolId` is its workspace's token: it acts on any device of it.
   */
  workspaceId?: string;
  createdAt: string;
  expiresAt?: string;
  /** When the token last authenticated, to within `LAST_USED_INTERVAL_MS` (noteUse). */
  lastUsedAt?: string;
}

/** A token's `lastUsedAt` is written at most once per this interval, per token and process. */
export const LAST_USED_INTERVAL_MS = 60_000;
/** Tokens whose last write a process remembers; past it, the stale ones (or all) are forgotten. */
const LAST_USED_TRACKED = 10_000;

/** Sets a token record's `lastUsedAt` (`lua/token-note-use-1.lua`). */
const NOTE_USE = storeScript<number>('token-note-use-1');
const WORKSPACE_ADD = storeScript<number>('workspace-token-add-1');

/** `keys.workspaceTokensIndexed` once every token, default's without a workspace too, is indexed. */
const TOKENS_INDEXED_VERSION = '2';

export type TokenCheck =
  { ok: true; token: TokenRecord; tokenHash: string } | { ok: false; reason: 'invalid' | 'expired' };

export function hashToken(value: string): string {
  // One-shot hash: the same digest as createHash().update().digest(), without a Hash object.
  return hash('sha256', value, 'hex');
}

const DURATION = /^([1-9]\d{0,9})([smhd])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `<n>s|m|h|d` (e.g. `30d`) to milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}

/**
 * The longest lifetime a token may be given (`expiresIn` of every route that mints tokens, the
 * token CLI's `--expires-in`): 3650 days, ten years. The format alone allows 9,999,999,999 days,
 * past the last date a JavaScript Date holds (year 275760); a token that should outlive ten years
 * is one without `expiresIn` (it never expires).
 */
export const TOKEN_LIFETIME_MAX_DAYS = 3650;
export const TOKEN_LIFETIME_MAX_MS = TOKEN_LIFETIME_MAX_DAYS * UNIT_MS.d;

/** What a lifetime must be, as the routes' 400 and the CLI say it (and the OpenAPI document). */
export const TOKEN_LIFETIME_RULE =
  `a positive number followed by s, m, h or d, e.g. 30d, of at most ${TOKEN_LIFETIME_MAX_DAYS}d ` +
  '(10 years); without it the token never expires';

/**
 * A token's lifetime in milliseconds from `<n>s|m|h|d`, or why it is none: `malformed` (not that
 * shape) or `too_long` (over TOKEN_LIFETIME_MAX_DAYS).
 */
export function tokenLifetime(text: string): number | 'malformed' | 'too_long' {
  const ms = parseDuration(text);
  if (ms === undefined) return 'malformed';
  return ms > TOKEN_LIFETIME_MAX_MS ? 'too_long' : ms;
}

/**
 * Where a kind of token lives and how its ids and values look. API tokens and admin API tokens
 * are two spaces with their own keys, so a token of one kind is never found as the other.
 */
export interface TokenSpace {
  byHash(sha256Hex: string): string;
  index(): string;
  newId(): string;
  newValue(): string;
  /** Pub/sub channel told of a revocation, for processes that cache verified tokens of this kind. */
  revokedChannel?: string;
  /** A workspace's own index of its tokens (API tokens only: admin tokens have no workspace). */
  workspaceIndex?: (workspaceId: string) => string;
}

/** Tokens of the public API (`/api/messenger/v1`), each acting on one device. */
export const API_TOKENS: TokenSpace = {
  byHash: keys.tokenByHash,
  index: keys.tokenIndex,
  newId: newTokenId,
  newValue: newTokenValue,
  revokedChannel: keys.tokensChannel(),
  workspaceIndex: keys.workspaceTokens,
};

/** Tokens of the admin API (`/api/admin/v1`) for automation; never cached, so no channel. */
export const ADMIN_TOKENS: TokenSpace = {
  byHash: keys.adminTokenByHash,
  index: keys.adminTokenIndex,
  newId: newAdminTokenId,
  newValue: newAdminTokenValue,
};

/** What a token is made of (its id, value and times are drawn by the store). */
export interface TokenInput {
  name: string;
  deviceId?: string;
  poolId?: string;
  workspaceId?: string;
  expiresInMs?: number;
  now?: Date;
}

/**
 * Tokens in Redis: `space.byHash(sha256)` holds the record, `space.index()` maps id -> sha256 so
 * tokens can be listed and revoked by id. Used by the token CLI and by auth (API and admin).
 */
export class TokenStore {
  /** noteUse's throttle: token hash -> when this process last wrote its `lastUsedAt` (ms). */
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly space: TokenSpace = API_TOKENS,
  ) {}

  /** Creates a token; the returned value is the only time it exists outside the client. */
  async create(input: TokenInput): Promise<{ value: string; token: TokenRecord }> {
    const made = await this.createWithin(input, Number.MAX_SAFE_INTEGER);
    if (made === 'limit') throw new Error('no workspace holds that many tokens');
    return made;
  }

  /**
   * Creates a token unless its workspace holds `limit` tokens already (`'limit'`: nothing made).
   * A token without a workspace is not counted.
   */
  async createWithin(
    input: TokenInput,
    limit: number,
  ): Promise<{ value: string; token: TokenRecord } | 'limit'> {
    // A token acts on one device or sends through one pool: both would leave auth to guess.
    if (input.deviceId && input.poolId) throw new Error('a token has a deviceId or a poolId, not both');
    // The routes and the CLI refuse a longer lifetime first (tokenLifetime): past it lies a date
    // the record could not hold.
    if (input.expiresInMs !== undefined && !(input.expiresInMs <= TOKEN_LIFETIME_MAX_MS))
      throw new RangeError(`a token lives at most ${TOKEN_LIFETIME_MAX_DAYS} days`);
    const now = input.now ?? new Date();
    const value = this.space.newValue();
    const hash = hashToken(value);
    const token: TokenRecord = {
      id: this.space.newId(),
      name: input.name,
      ...(input.deviceId ? { deviceId: input.deviceId } : {}),
      ...(input.poolId ? { poolId: input.poolId } : {}),
      // Given: a token of that workspace (default's too). Not given: a token of the shape from
      // before workspaces, which auth keeps to its old reach (docs/workspaces.md).
      ...(input.workspaceId ? { workspaceId: input.workspaceId } : {}),
      createdAt: now.toISOString(),
      ...(input.expiresInMs ? { expiresAt: new Date(now.getTime() + input.expiresInMs).toISOString() } : {}),
    };
    // Its workspace's index first, counted against the limit in one script; listed there before
    // the record exists, it is skipped by `listWorkspace` (and dropped) if the record never comes.
    const wsIndex = this.space.workspaceIndex?.(input.workspaceId ?? DEFAULT_WORKSPACE);
    if (wsIndex && !input.workspaceId) {
      // A token of the shape from before workspaces is default's, and counts against nothing.
      await this.redis.hset(wsIndex, token.id, hash);
    } else if (
      wsIndex &&
      (await WORKSPACE_ADD.run(this.redis, [wsIndex], [token.id, hash, String(limit)])) !== 1
    )
      return 'limit';
    // Two keys of two Cluster slots, so no transaction: the record first (the token works), then
    // the index entry that lists it. A crash in between leaves a working token that `list` does not
    // show; the CLI reported no success, so it is never handed out.
    await this.redis.hset(this.space.byHash(hash), { ...token, hash });
    await this.redis.hset(this.space.index(), token.id, hash);
    return { value, token };
  }

  async list(): Promise<TokenRecord[]> {
    const index = await this.redis.hgetall(this.space.index());
    const hashes = Object.values(index);
    if (hashes.length === 0) return [];
    // One read per token, not a pipeline: on a Cluster the records live on different nodes.
    const rows = await Promise.all(hashes.map((h) => this.redis.hgetall(this.space.byHash(h))));
    return rows
      .map((h) => toRecord(h))
      .filter((t): t is TokenRecord => t !== undefined)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /**
   * A workspace's tokens from its own index (reads its tokens only, however many others there
   * are), oldest first; default's include the tokens without a workspace (the shape from before
   * workspaces). An entry whose record is gone (a creation that stopped half-way, a revoke that
   * did) is dropped from the index. Until the backfill has listed the old tokens in their indexes
   * (`indexWorkspaceTokens`, at the API's start), default's are read from the install's index.
   */
  async listWorkspace(workspaceId: string): Promise<TokenRecord[]> {
    const indexKey = this.space.workspaceIndex?.(workspaceId);
    if (!indexKey) return [];
    if (workspaceId === DEFAULT_WORKSPACE && !(await this.indexed())) {
      return (await this.list()).filter((t) => (t.workspaceId ?? DEFAULT_WORKSPACE) === workspaceId);
    }
    const index = Object.entries(await this.redis.hgetall(indexKey));
    const rows = await Promise.all(index.map(([, h]) => this.redis.hgetall(this.space.byHash(h))));
    const gone = index.filter((_, i) => toRecord(rows[i]!) === undefined).map(([id]) => id);
    if (gone.length > 0) await this.redis.hdel(indexKey, ...gone);
    return rows
      .map((h) => toRecord(h))
      .filter((t): t is TokenRecord => t !== undefined)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /**
   * Lists in their workspace's index the tokens made before that index existed, those without a
   * workspace in default's (once per install: `keys.workspaceTokensIndexed` holds
   * TOKENS_INDEXED_VERSION when done; `1`, from the release that listed workspace tokens only,
   * runs it again). Idempotent; the API runs it at start. How many it listed.
   */
  async indexWorkspaceTokens(): Promise<number> {
    const { workspaceIndex } = this.space;
    if (!workspaceIndex || (await this.indexed())) return 0;
    let listed = 0;
    for (const t of await this.list()) {
      const hash = await this.redis.hget(this.space.index(), t.id);
      if (hash)
        listed += await this.redis.hset(workspaceIndex(t.workspaceId ?? DEFAULT_WORKSPACE), t.id, hash);
    }
    await this.redis.set(keys.workspaceTokensIndexed(), TOKENS_INDEXED_VERSION);
    return listed;
  }

  /** Whether every token is in its workspace's index (the backfill of this release has run). */
  private async indexed(): Promise<boolean> {
    return (await this.redis.get(keys.workspaceTokensIndexed())) === TOKENS_INDEXED_VERSION;
  }

  /** One token's record by its id (two reads, whatever the number of tokens); undefined when none. */
  async get(id: string): Promise<TokenRecord | undefined> {
    const hash = await this.redis.hget(this.space.index(), id);
    return hash ? toRecord(await this.redis.hgetall(this.space.byHash(hash))) : undefined;
  }

  /** Deletes a token by id; false when there is no such token. */
  async revoke(id: string): Promise<boolean> {
    const hash = await this.redis.hget(this.space.index(), id);
    if (!hash) return false;
    const workspaceId =
      this.space.workspaceIndex &&
      ((await this.redis.hget(this.space.byHash(hash), 'workspaceId')) ?? DEFAULT_WORKSPACE);
    // The record first: the token stops working at once. Separate commands, since the record and
    // the indexes are in other Cluster slots; a crash before the HDEL leaves an index entry whose
    // record is gone, which `list` skips and a second revoke removes.
    await this.redis.del(this.space.byHash(hash));
    if (workspaceId) await this.redis.hdel(this.space.workspaceIndex!(workspaceId), id);
    await this.redis.hdel(this.space.index(), id);
    if (!this.space.revokedChannel) return true;
    // API processes cache verified tokens: tell them to forget this one now.
    await this.redis.publish(this.space.revokedChannel, hash);
    // Redis answers the publisher before it writes the message to the subscribers; one more round
    // trip returns only once it has, so a request sent after `revoke` meets an API that heard it
    // (on a single Redis; a Cluster forwards the message to its other nodes over its bus first).
    // The token is revoked whatever this answers.
    await this.redis.ping().catch(() => undefined);
    return true;
  }

  /**
   * Records that a token (by its hash, as `verify` answers it) just authenticated: its record's
   * `lastUsedAt`, written at most once per `LAST_USED_INTERVAL_MS` per token in this process. A
   * throttled call costs one Map lookup and answers undefined; otherwise the write is started and
   * its promise returned, which never rejects: an error goes to `onError`. Callers do not wait for
   * it (fire-and-forget), so no request waits on this write.
   */
  noteUse(
    tokenHash: string,
    onError: (err: unknown) => void = () => undefined,
    now = Date.now(),
  ): Promise<void> | undefined {
    const last = this.lastWritten.get(tokenHash);
    if (last !== undefined && now - last < LAST_USED_INTERVAL_MS && now >= last) return undefined;
    if (last === undefined && this.lastWritten.size >= LAST_USED_TRACKED) this.forgetStale(now);
    this.lastWritten.set(tokenHash, now);
    // A failed write is not retried before the interval ends either: a Redis refusing writes
    // (out of memory, a read-only replica) must not cost every request a round trip.
    return NOTE_USE.run(this.redis, [this.space.byHash(tokenHash)], [new Date(now).toISOString()]).then(
      () => undefined,
      onError,
    );
  }

  /** Drops the throttle's entries older than the interval; all of them if that frees nothing. */
  private forgetStale(now: number): void {
    for (const [hash, at] of this.lastWritten) {
      if (now - at >= LAST_USED_INTERVAL_MS) this.lastWritten.delete(hash);
    }
    if (this.lastWritten.size >= LAST_USED_TRACKED) this.lastWritten.clear();
  }

  /**
   * Looks the token up by its hash, then compares the stored hash with the computed one in
   * constant time, so neither the lookup nor the comparison leaks how much of a guess was right.
   */
  async verify(value: string, now = new Date()): Promise<TokenCheck> {
    const hash = hashToken(value);
    const stored = await this.redis.hgetall(this.space.byHash(hash));
    const token = toRecord(stored);
    if (!token || !stored.hash || !sameHash(stored.hash, hash)) return { ok: false, reason: 'invalid' };
    if (isExpired(token, now)) return { ok: false, reason: 'expired' };
    return { ok: true, token, tokenHash: hash };
  }
}

export function isExpired(token: TokenRecord, now = new Date()): boolean {
  return token.expiresAt !== undefined && Date.parse(token.expiresAt) <= now.getTime();
}

function sameHash(storedHex: string, computedHex: string): boolean {
  const a = Buffer.from(storedHex, 'hex');
  const b = Buffer.from(computedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

function toRecord(h: Record<string, string> | undefined): TokenRecord | undefined {
  if (!h?.id || !h.createdAt) return undefined;
  return {
    id: h.id,
    name: h.name ?? '',
    ...(h.deviceId ? { deviceId: h.deviceId } : {}),
    ...(h.poolId ? { poolId: h.poolId } : {}),
    ...(h.workspaceId ? { workspaceId: h.workspaceId } : {}),
    createdAt: h.createdAt,
    ...(h.expiresAt ? { expiresAt: h.expiresAt } : {}),
    ...(h.lastUsedAt ? { lastUsedAt: h.lastUsedAt } : {}),
  };
}
