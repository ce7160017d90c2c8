import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import calculateSlot from 'cluster-key-slot';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';

/**
 * Lua scripts defined once, loaded once per connection and run by EVALSHA, falling back to EVAL
 * on NOSCRIPT (after a Redis restart or a failover). In pipelines and transactions they are
 * ioredis' `defineCommand`s, which load the missing scripts first. This is the only module that
 * calls `eval`/`evalsha` (test/fast/lint/lua-scripts.test.ts keeps it so): a plain `redis.eval` would
 * send the whole script text on every call.
 *
 * A script's text lives in a `.lua` file of the package that owns its keys (`loadScript`), never in
 * TypeScript. Keep every script's keys in one hash slot (one device's keys share the `{deviceId}`
 * tag) so it runs on Redis Cluster.
 */
export class RedisScript<R = unknown> {
  constructor(
    /** A command name unique in the process (it becomes a method of the connection). */
    readonly name: string,
    readonly lua: string,
    /** The number of keys every call passes, when the script fixes it (its file name says so). */
    readonly numKeys?: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** The script's SHA-1, its name in Redis's script cache. */
  readonly sha: string;

  /**
   * Runs the script on `redis`: EVALSHA, and EVAL (which caches it again) when Redis answers
   * NOSCRIPT. Plain commands, not the connection's defined one: with auto-pipelining, ioredis
   * puts a call into the pipeline it opened earlier in the same turn, and a pipeline opened
   * before a script was defined on the connection lacks it (`pipeline[name] is not a function`).
   */
  async run(
    redis: Redis | Cluster,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[] = [],
  ): Promise<R> {
    this.checkKeys(keys);
    try {
      return (await redis.evalsha(this.sha, keys.length, ...keys, ...args)) as R;
    } catch (err) {
      if (!/^NOSCRIPT/.test((err as Error).message)) throw err;
      return (await redis.eval(this.lua, keys.length, ...keys, ...args)) as R;
    }
  }

  /**
   * Queues the script on a pipeline or transaction made by `scriptPipeline` (or by
   * `redis.pipeline()` after `define`): its reply is at this command's index in `exec()`.
   */
  queue(
    pipeline: ChainableCommander,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[] = [],
  ): void {
    this.checkKeys(keys);
    const fn = (pipeline as unknown as Record<string, unknown>)[this.name];
    if (typeof fn !== 'function')
      throw new Error(`script ${this.name} is not defined on this pipeline's connection`);
    (fn as (...a: unknown[]) => unknown).call(pipeline, keys.length, ...keys, ...args);
  }

  /** A call with another number of keys than the script's file names is a programming error. */
  private checkKeys(keys: readonly string[]): void {
    if (this.numKeys !== undefined && keys.length !== this.numKeys)
      throw new Error(`script ${this.name} takes ${this.numKeys} keys, was given ${keys.length}`);
  }

  /** Defines the script as a command of `redis` (once); pipelines made afterwards have it too. */
  define(redis: Redis | Cluster): (...args: unknown[]) => Promise<unknown> {
    const target = redis as unknown as Record<string, unknown>;
    if (typeof target[this.name] !== 'function') redis.defineCommand(this.name, { lua: this.lua });
    return target[this.name] as (...args: unknown[]) => Promise<unknown>;
  }
}

/** One call of a script: its keys (one hash slot) and arguments. */
export interface ScriptCall {
  keys: readonly string[];
  args: readonly (string | number)[];
}

/**
 * Runs `script` once per call in one round trip: one pipeline on a single Redis; on a Cluster
 * (where a pipeline must stay on one node) one pipeline per node serving the calls' slots, all at
 * once. Replies in call order; a failed call (or pipeline) yields its Error in place.
 */
export async function runScriptMany<R>(
  redis: Redis | Cluster,
  script: RedisScript<R>,
  calls: readonly ScriptCall[],
): Promise<(R | Error)[]> {
  const out: (R | Error)[] = new Array<R | Error>(calls.length);
  const groups = new Map<string, number[]>();
  calls.forEach((c, i) => {
    const group = redis.isCluster ? clusterGroup(redis as Cluster, c.keys[0] ?? '') : '';
    const g = groups.get(group);
    if (g) g.push(i);
    else groups.set(group, [i]);
  });
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      try {
        const pipe = scriptPipeline(redis, script as RedisScript);
        for (const i of indexes) script.queue(pipe, calls[i]!.keys, calls[i]!.args);
        const replies = pipelineReplies(await pipe.exec());
        indexes.forEach((i, k) => (out[i] = replies[k] as R | Error));
      } catch (err) {
        for (const i of indexes) out[i] = err as Error;
      }
    }),
  );
  return out;
}

/** The master serving the key's slot when the slot map is known, else the slot itself. */
function clusterGroup(cluster: Cluster, key: string): string {
  const slot = calculateSlot(key);
  const nodes = (cluster as unknown as { slots: string[][] }).slots[slot];
  return nodes?.[0] ?? `slot:${slot}`;
}

/** A pipeline of `redis` on which every one of `scripts` can be queued. */
export function scriptPipeline(redis: Redis | Cluster, ...scripts: RedisScript[]): ChainableCommander {
  for (const s of scripts) s.define(redis);
  return redis.pipeline();
}

/** A pipeline's replies as values; a command that failed yields its Error in place. */
export function pipelineReplies(results: [Error | null, unknown][] | null): unknown[] {
  return (results ?? []).map(([err, value]) => err ?? value);
}

/**
 * Script files, BullMQ's way: `<name>-<numKeys>.lua` (or `<name>-n.lua` for a script whose key
 * count varies per call), opening with a header comment that says what it does, its KEYS, its ARGV
 * and what it returns. A line `--- @include "<part>"` inlines `includes/<part>.lua` of the same
 * folder, or else of @mgw/common's `lua/includes` (pieces every package shares, such as `now`),
 * once per script however often it is asked for.
 *
 * Loaded at start, not generated: the files are read once when the module defining the script is
 * imported, the same way from `src/` (tsx) and `dist/` (each package keeps its scripts in `lua/`
 * beside both, and the image ships the packages whole), so no generated TypeScript can fall behind
 * its `.lua` and no build step has to run before a test or a type check. A missing file, include or
 * a malformed name fails the import, at start.
 */
export function loadScript<R = unknown>(dir: URL, file: string): RedisScript<R> {
  const m = /^(?:.*\/)?([a-z][a-z0-9-]*?)-(\d+|n)$/.exec(file);
  if (!m) throw new Error(`script file name ${file}: expected <name>-<numKeys> or <name>-n`);
  const lua = scriptSource(dir, file);
  const numKeys = m[2] === 'n' ? undefined : Number(m[2]);
  const pkg = fileURLToPath(dir).split(/[\\/]/).filter(Boolean).slice(-2, -1)[0] ?? 'lua';
  return new RedisScript<R>(`lua:${pkg}/${file}`, lua, numKeys);
}

/** The folder of the includes every package shares. */
const COMMON_INCLUDES = new URL('../lua/includes/', import.meta.url);

/** A script file's text with its includes inlined (each once, in order of first mention). */
export function scriptSource(dir: URL, file: string): string {
  const seen = new Set<string>();
  const read = (url: URL, chain: string[]): string => {
    const text = readFileSync(url, 'utf8');
    return text.replace(/^--- @include "([a-z0-9/-]+)"[ \t]*$/gm, (_line, part: string) => {
      const own = new URL(`includes/${part}.lua`, dir);
      const target = existsSync(own) ? own : new URL(`${part}.lua`, COMMON_INCLUDES);
      if (chain.includes(target.href))
        throw new Error(`script include cycle: ${[...chain, target.href].join(' -> ')}`);
      if (seen.has(target.href)) return `-- (${part}: included above)`;
      seen.add(target.href);
      return read(target, [...chain, target.href]).trimEnd();
    });
  };
  return read(new URL(`${file}.lua`, dir), []);
}
