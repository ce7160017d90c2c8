import type { RedisClient } from '@mgw/common';

/**
 * TEST SUPPORT, not used by the API: the few plain Redis commands that some reads of libs/store run
 * (a contact's identities, the labels of chats, a device's sending view and health, its queue
 * state, a pairing record) and that a few use cases run themselves (a handoff's value, a chat
 * set), in memory — for the use cases' fast tests, which open no connection. No Lua: a store
 * whose logic is a script is given to a use case as a narrow interface and faked as such, never
 * through this.
 *
 * Keys are written as the store writes them (`keys` of @mgw/contracts): `hash`, `set`, `zset`,
 * `value`. Expiries are kept (`ttl`) and never run out.
 */
export class MemoryRedis {
  readonly values = new Map<string, string | Buffer>();
  readonly hashes = new Map<string, Map<string, string | Buffer>>();
  readonly sets = new Map<string, Set<string>>();
  readonly zsets = new Map<string, Map<string, number>>();
  readonly ttls = new Map<string, number>();
  /** What was published, in order (`subscribers`: what PUBLISH answers, the listeners it reached). */
  readonly published: { channel: string; message: string }[] = [];
  subscribers = 0;
  /** Every command run, by name (a pipeline's included), for a test to say what was (not) read. */
  readonly commands: string[] = [];

  /** This fake, as the client a store or use case takes. */
  get client(): RedisClient {
    return this as unknown as RedisClient;
  }

  /** Sets a hash's fields (a test's seeding, as the store writes them). */
  hash(key: string, fields: Record<string, string | Buffer>): this {
    const h = this.hashes.get(key) ?? new Map<string, string | Buffer>();
    for (const [f, v] of Object.entries(fields)) h.set(f, v);
    this.hashes.set(key, h);
    return this;
  }

  /** Adds members to a set. */
  addMembers(key: string, ...members: string[]): this {
    const s = this.sets.get(key) ?? new Set<string>();
    members.forEach((m) => s.add(m));
    this.sets.set(key, s);
    return this;
  }

  /** Adds members with their scores to a sorted set. */
  zset(key: string, members: Record<string, number>): this {
    const z = this.zsets.get(key) ?? new Map<string, number>();
    for (const [m, score] of Object.entries(members)) z.set(m, score);
    this.zsets.set(key, z);
    return this;
  }

  private str = (v: string | Buffer | undefined) => (v === undefined ? null : v.toString());

  // ---- the commands ----
  async get(key: string) {
    return this.str(this.values.get(key));
  }
  async getBuffer(key: string) {
    const v = this.values.get(key);
    return v === undefined ? null : Buffer.from(v);
  }
  async set(key: string, value: string | Buffer, ...opts: (string | number)[]) {
    this.values.set(key, value);
    const ex = opts.findIndex((o) => String(o).toUpperCase() === 'EX');
    if (ex >= 0) this.ttls.set(key, Number(opts[ex + 1]));
    return 'OK';
  }
  async del(...keys: string[]) {
    let n = 0;
    for (const key of keys)
      for (const store of [this.values, this.hashes, this.sets, this.zsets]) if (store.delete(key)) n++;
    return n;
  }
  async exists(...keys: string[]) {
    return keys.filter((k) => [this.values, this.hashes, this.sets, this.zsets].some((s) => s.has(k))).length;
  }
  async hget(key: string, field: string) {
    return this.str(this.hashes.get(key)?.get(field));
  }
  async hmget(key: string, ...fields: (string | string[])[]) {
    const h = this.hashes.get(key);
    return fields.flat().map((f) => this.str(h?.get(f)));
  }
  async hgetall(key: string) {
    return Object.fromEntries([...(this.hashes.get(key) ?? [])].map(([f, v]) => [f, v.toString()]));
  }
  async hgetallBuffer(key: string) {
    return Object.fromEntries([...(this.hashes.get(key) ?? [])].map(([f, v]) => [f, Buffer.from(v)]));
  }
  async hvals(key: string) {
    return [...(this.hashes.get(key)?.values() ?? [])].map(String);
  }
  async hkeys(key: string) {
    return [...(this.hashes.get(key)?.keys() ?? [])];
  }
  async hexists(key: string, field: string) {
    return this.hashes.get(key)?.has(field) ? 1 : 0;
  }
  async hset(key: string, ...args: (string | Record<string, string>)[]) {
    const fields =
      typeof args[0] === 'object'
        ? (args[0] as Record<string, string>)
        : Object.fromEntries(
            Array.from({ length: args.length / 2 }, (_, i) => [
              args[2 * i] as string,
              args[2 * i + 1] as string,
            ]),
          );
    const before = this.hashes.get(key)?.size ?? 0;
    this.hash(key, fields);
    return this.hashes.get(key)!.size - before;
  }
  async hsetnx(key: string, field: string, value: string) {
    if (this.hashes.get(key)?.has(field)) return 0;
    this.hash(key, { [field]: value });
    return 1;
  }
  async hdel(key: string, ...fields: string[]) {
    const h = this.hashes.get(key);
    return fields.filter((f) => h?.delete(f)).length;
  }
  async hlen(key: string) {
    return this.hashes.get(key)?.size ?? 0;
  }
  async ttl(key: string) {
    return (await this.exists(key)) ? (this.ttls.get(key) ?? -1) : -2;
  }
  /** The keys matching a glob of `*` (KEYS: a test's look at what is left). */
  async keys(pattern: string) {
    const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    return [this.values, this.hashes, this.sets, this.zsets]
      .flatMap((s) => [...s.keys()])
      .filter((k) => re.test(k));
  }
  async sadd(key: string, ...members: string[]) {
    const before = this.sets.get(key)?.size ?? 0;
    this.addMembers(key, ...members);
    return this.sets.get(key)!.size - before;
  }
  async srem(key: string, ...members: string[]) {
    const s = this.sets.get(key);
    return members.filter((m) => s?.delete(m)).length;
  }
  /** Up to `count` members (the first ones: a test needs no chance). */
  async srandmember(key: string, count: number) {
    return [...(this.sets.get(key) ?? [])].slice(0, count);
  }
  async expire(key: string, seconds: number) {
    if (!(await this.exists(key))) return 0;
    this.ttls.set(key, seconds);
    return 1;
  }
  async smembers(key: string) {
    return [...(this.sets.get(key) ?? [])];
  }
  async scard(key: string) {
    return this.sets.get(key)?.size ?? 0;
  }
  /** One call answers the whole set (cursor 0 next): what SSCAN's callers loop over. */
  async sscan(key: string, _cursor: string) {
    return ['0', [...(this.sets.get(key) ?? [])]];
  }
  async zscore(key: string, member: string) {
    const score = this.zsets.get(key)?.get(member);
    return score === undefined ? null : String(score);
  }
  async zmscore(key: string, ...members: string[]) {
    return members.map((m) => {
      const score = this.zsets.get(key)?.get(m);
      return score === undefined ? null : String(score);
    });
  }
  async zcard(key: string) {
    return this.zsets.get(key)?.size ?? 0;
  }
  /** By rank, lowest score first (`WITHSCORES`: each member followed by its score). */
  async zrange(key: string, start: number, stop: number, withScores?: string) {
    const sorted = [...(this.zsets.get(key) ?? [])].sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
    const picked = sorted.slice(start, stop < 0 ? sorted.length + stop + 1 : stop + 1);
    return withScores ? picked.flatMap(([m, score]) => [m, String(score)]) : picked.map(([m]) => m);
  }
  /** No streams are kept here: every stream is empty. */
  async xlen(_key: string) {
    return 0;
  }
  async publish(channel: string, message: string) {
    this.published.push({ channel, message });
    return this.subscribers;
  }
  /** One call answers every key matching MATCH (of TYPE, when given): cursor 0 next. */
  async scan(_cursor: string, ...opts: (string | number)[]) {
    const opt = (name: string) => {
      const i = opts.findIndex((o) => String(o).toUpperCase() === name);
      return i >= 0 ? String(opts[i + 1]) : undefined;
    };
    const type = opt('TYPE');
    const stores = { string: this.values, hash: this.hashes, set: this.sets, zset: this.zsets };
    const found = await this.keys(opt('MATCH') ?? '*');
    return ['0', found.filter((k) => !type || stores[type as keyof typeof stores]?.has(k))];
  }
  async ping() {
    return 'PONG';
  }
  async time() {
    const now = Date.now();
    return [String(Math.floor(now / 1000)), String((now % 1000) * 1000)];
  }

  /** A pipeline or transaction: its commands queued, then run in order by `exec`. */
  pipeline(): unknown {
    const queued: [string, unknown[]][] = [];
    const batch: Record<string, unknown> = new Proxy(
      {},
      {
        get: (_t, name: string) =>
          name === 'exec'
            ? async () => {
                const out: [Error | null, unknown][] = [];
                for (const [command, args] of queued) out.push([null, await this.run(command, args)]);
                return out;
              }
            : (...args: unknown[]) => {
                queued.push([name, args]);
                return batch;
              },
      },
    );
    return batch;
  }
  multi(): unknown {
    return this.pipeline();
  }

  private run(command: string, args: unknown[]): Promise<unknown> {
    const fn = (this as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[command];
    if (typeof fn !== 'function' || command === 'pipeline' || command === 'multi')
      throw new Error(`MemoryRedis has no ${command}: fake the store that runs it instead`);
    return fn.apply(this, args);
  }
}

// Every command counts itself (the pipelines' too: they run through the same methods).
for (const name of Object.getOwnPropertyNames(MemoryRedis.prototype)) {
  if (
    ['constructor', 'client', 'hash', 'addMembers', 'zset', 'pipeline', 'multi', 'run', 'str'].includes(name)
  )
    continue;
  const descriptor = Object.getOwnPropertyDescriptor(MemoryRedis.prototype, name);
  const original = descriptor?.value as ((...args: unknown[]) => unknown) | undefined;
  if (typeof original !== 'function') continue;
  Object.defineProperty(MemoryRedis.prototype, name, {
    ...descriptor,
    value: function (this: MemoryRedis, ...args: unknown[]) {
      this.commands.push(name);
      return original.apply(this, args);
    },
  });
}
