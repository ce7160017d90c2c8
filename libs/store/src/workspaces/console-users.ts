import type { RedisClient } from '@mgw/common';
import { randomBytes } from 'node:crypto';
import { WORKSPACE_ID_PATTERN, keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/**
 * What a console user may do in its workspace (docs/workspaces.md "The console"): `admin`
 * administers it (devices, tokens, pools, webhooks, settings, users); `agent` reads everything of
 * it and answers chats, and changes nothing else.
 */
export const CONSOLE_ROLES = ['admin', 'agent'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** A login name: lowercase, 3-64 characters of a-z, 0-9, `.`, `_`, `@`, `-`, starting with a letter or digit. */
export const CONSOLE_USER_PATTERN = /^[a-z0-9][a-z0-9._@-]{2,63}$/;

/** A password's length in characters (code points, after NFC). */
export const CONSOLE_PASSWORD_LIMITS = { minLength: 12, maxLength: 1024 } as const;

/** A console user as Redis keeps it: the password only as its KDF hash (with its parameters). */
export interface ConsoleUserRecord {
  /** The login name (CONSOLE_USER_PATTERN), unique in the install. */
  user: string;
  workspace: string;
  role: ConsoleRole;
  /** `scrypt$<log2 N>$<r>$<p>$<salt b64>$<key b64>` (services/api password-hash.ts). */
  password: string;
  /** Drawn again by every change of the password or the role: a session holds the one it signed in with. */
  stamp: string;
  createdAt: string;
  updatedAt: string;
}

const CREATE = storeScript<number>('console-user-create-1');
const LIST = storeScript<number>('workspace-user-add-1');
const UPDATE = storeScript<string[]>('console-user-update-1');

const newStamp = () => randomBytes(12).toString('base64url');

/**
 * The console's users (docs/workspaces.md "The console"): one hash per user, found by its login
 * name (`keys.consoleUser`, its own slot: the name is unique in the install), the set of each
 * workspace's names (`keys.workspaceUsers`, in the workspace's slot) and the set of each user's
 * admin sessions (`keys.consoleUserSessions`). The record and the sets live in different Cluster
 * slots, so writes that span them are ordered for a crash in between to leave nothing usable
 * wrongly: a name is listed in its workspace's set before its record is written (a listed name
 * without a record is skipped and dropped by `list`), and a record is deleted before its name
 * leaves the set and before its sessions end (the guard checks the record on every request, so a
 * session of a deleted user is refused whatever was left).
 */
export class ConsoleUserStore {
  constructor(private readonly redis: RedisClient) {}

  /**
   * A new user; `taken` when the name is anyone's in the install, `full` when its workspace holds
   * `maxUsers` users already (counted and listed in one script); nothing changed then.
   */
  async create(
    input: { user: string; workspace: string; role: ConsoleRole; password: string },
    now = new Date(),
    maxUsers = Number.MAX_SAFE_INTEGER,
  ): Promise<ConsoleUserRecord | 'taken' | 'full'> {
    if (!CONSOLE_USER_PATTERN.test(input.user)) throw new Error(`not a console user name: ${input.user}`);
    if (!WORKSPACE_ID_PATTERN.test(input.workspace))
      throw new Error(`not a workspace id: ${input.workspace}`);
    const record: ConsoleUserRecord = {
      ...input,
      stamp: newStamp(),
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const added = await LIST.run(
      this.redis,
      [keys.workspaceUsers(input.workspace)],
      [input.user, String(maxUsers)],
    );
    if (added === -1) return 'full';
    const listed = added === 1;
    const written = await CREATE.run(this.redis, [keys.consoleUser(input.user)], fields(record));
    if (written === 1) return record;
    // Taken: the entry this call added is taken back, unless the name is this workspace's user.
    if (listed && (await this.get(input.user))?.workspace !== input.workspace)
      await this.redis.srem(keys.workspaceUsers(input.workspace), input.user);
    return 'taken';
  }

  /** A user by its login name; undefined when there is none (or the name is no login name). */
  async get(user: string): Promise<ConsoleUserRecord | undefined> {
    if (!CONSOLE_USER_PATTERN.test(user)) return undefined;
    return toRecord(await this.redis.hgetall(keys.consoleUser(user)));
  }

  /**
   * A workspace's users by name. A listed name whose record is gone or another workspace's (a
   * creation or a deletion stopped half-way) is dropped from the set. One read per user.
   */
  async list(workspace: string): Promise<ConsoleUserRecord[]> {
    const names = await this.redis.smembers(keys.workspaceUsers(workspace));
    const records = await Promise.all(names.map((n) => this.get(n)));
    const stale = names.filter((_, i) => records[i]?.workspace !== workspace);
    if (stale.length > 0) await this.redis.srem(keys.workspaceUsers(workspace), ...stale);
    return records
      .filter((r): r is ConsoleUserRecord => r?.workspace === workspace)
      .sort((a, b) => a.user.localeCompare(b.user));
  }

  /**
   * Changes a user's password (its new hash) or role, or both, with a new `stamp` (so every
   * session signed in before is no longer its). Undefined when there is no such user.
   */
  async update(
    user: string,
    change: { password?: string; role?: ConsoleRole },
    now = new Date(),
  ): Promise<ConsoleUserRecord | undefined> {
    if (!CONSOLE_USER_PATTERN.test(user)) return undefined;
    const set = ['stamp', newStamp(), 'updatedAt', now.toISOString()];
    if (change.password !== undefined) set.push('password', change.password);
    if (change.role !== undefined) set.push('role', change.role);
    const flat = await UPDATE.run(this.redis, [keys.consoleUser(user)], set);
    const h: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    return toRecord(h);
  }

  /**
   * Deletes a user: its record first (it can no longer sign in, and its sessions are refused at
   * once), then its name from its workspace's set, then its sessions. Undefined when there was none.
   */
  async delete(user: string): Promise<ConsoleUserRecord | undefined> {
    const record = await this.get(user);
    if (!record) return undefined;
    await this.redis.del(keys.consoleUser(user));
    await this.redis.srem(keys.workspaceUsers(record.workspace), user);
    await this.endSessions(user);
    return record;
  }

  /** Lists an admin session (by the SHA-256 of its id) as the user's, for as long as it lives. */
  async noteSession(user: string, sessionHash: string, ttlSeconds: number): Promise<void> {
    const key = keys.consoleUserSessions(user);
    // One key, one slot: the set and its expiry in one transaction (the newest session's TTL).
    await this.redis.multi().sadd(key, sessionHash).expire(key, ttlSeconds).exec();
  }

  /** Ends every admin session of the user (each its own key: separate commands on a Cluster). */
  async endSessions(user: string): Promise<number> {
    const key = keys.consoleUserSessions(user);
    const hashes = await this.redis.smembers(key);
    let ended = 0;
    for (const hash of hashes) ended += await this.redis.del(keys.adminSession(hash));
    await this.redis.del(key);
    return ended;
  }
}

function fields(r: ConsoleUserRecord): string[] {
  return Object.entries(r).flat();
}

function toRecord(h: Record<string, string>): ConsoleUserRecord | undefined {
  const role = CONSOLE_ROLES.find((r) => r === h.role);
  if (!h.user || !h.workspace || !role || !h.password || !h.stamp || !h.createdAt) return undefined;
  return {
    user: h.user,
    workspace: h.workspace,
    role,
    password: h.password,
    stamp: h.stamp,
    createdAt: h.createdAt,
    updatedAt: h.updatedAt ?? h.createdAt,
  };
}
