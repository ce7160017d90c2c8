/**
 * Redis's commands over a stretch of time, from MONITOR (the test kit's RedisMonitor): every
 * process's, each client command by name (a script call by its script's name) and each command a
 * script ran counted against that script. For the round-trips bench (round-trips.bench.ts).
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { loadScript } from '@mgw/common/redis-scripts';
import { RedisMonitor } from '@mgw/testing';
import { nowMs } from './resp-tap.js';

interface Seen {
  at: number;
  /** A client's command (`EVALSHA policy-admit-2` for a script's call), or the command a script ran. */
  name: string;
  /** For a command a script ran: the script. */
  script?: string;
}

/** Counts over a stretch: client commands by name, and what scripts ran by script. */
export interface Counts {
  client: Map<string, number>;
  /** Script → the commands it ran. */
  inner: Map<string, number>;
}

const SCRIPT_CALLS = new Set(['EVAL', 'EVALSHA', 'EVAL_RO', 'EVALSHA_RO', 'FCALL', 'FCALL_RO']);

export class CommandCounter {
  private readonly seen: Seen[] = [];
  /** The last client script call (its name), for the commands that follow it (innerAfter). */
  private lastScript = '?';
  /** Commands a script ran, waiting for its call's line (MONITOR shows them first: !innerAfter). */
  private waiting: Seen[] = [];
  private innerAfter = true;
  private monitor?: RedisMonitor;

  private constructor(
    private readonly names: ReadonlyMap<string, string>,
    private readonly shape: (key: string) => string,
  ) {}

  /**
   * MONITOR on `url`. `redis` runs a probe first, to learn whether MONITOR shows a script's own
   * commands after its call's line (Redis 7.0) or before it. `names`: scripts by SHA-1; one not
   * there is named by its SHA-1 and its first key, as `shape` prints it.
   */
  static async start(
    url: string,
    redis: Redis | Cluster,
    names: ReadonlyMap<string, string>,
    shape: (key: string) => string = (key) => key,
  ): Promise<CommandCounter> {
    const counter = new CommandCounter(names, shape);
    const probe: { name: string; args: string[]; lua: boolean }[] = [];
    let probing = true;
    counter.monitor = await RedisMonitor.start(url, (args, byScript) => {
      if (probing) probe.push({ name: (args[0] ?? '').toUpperCase(), args, lua: byScript });
      counter.note(args, byScript);
    });
    // A script of the store's that only reads, on keys of nobody's, run twice (the first may load it).
    const script = loadScript(new URL('../../../../libs/store/lua/', import.meta.url), 'liveness-count-1');
    const key = (i: number) => `mgw-bench:monitor-probe:${process.pid}:${i}`;
    await script.run(redis, [key(1)]);
    await script.run(redis, [key(2)]);
    await redis.ping(); // MONITOR has streamed the probe once the PING's line came
    const deadline = Date.now() + 5000;
    while (!probe.some((p) => p.name === 'PING') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    probing = false;
    const inner = probe.findIndex((p) => p.lua && p.args.includes(key(2)));
    let before = inner - 1;
    while (before >= 0 && probe[before]!.lua) before--;
    counter.innerAfter = before >= 0 && probe[before]!.args.includes(key(2));
    counter.seen.length = 0;
    return counter;
  }

  /** What ran in [from, to] (ms, as `nowMs`). */
  counts(from: number, to: number): Counts {
    const client = new Map<string, number>();
    const inner = new Map<string, number>();
    for (const s of this.seen) {
      if (s.at < from || s.at > to) continue;
      if (s.script) inner.set(s.script, (inner.get(s.script) ?? 0) + 1);
      else client.set(s.name, (client.get(s.name) ?? 0) + 1);
    }
    return { client, inner };
  }

  close(): void {
    this.monitor?.close();
  }

  private note(args: string[], byScript: boolean): void {
    const at = nowMs();
    const name = (args[0] ?? '').toUpperCase();
    if (byScript) {
      const seen: Seen = { at, name, script: this.lastScript };
      if (this.innerAfter) this.seen.push(seen);
      else this.waiting.push(seen);
      return;
    }
    if (SCRIPT_CALLS.has(name)) {
      this.lastScript = this.scriptName(name, args);
      for (const w of this.waiting) this.seen.push({ ...w, script: this.lastScript });
      this.waiting = [];
      this.seen.push({ at, name: `${name} ${this.lastScript}` });
      return;
    }
    this.seen.push({ at, name });
  }

  private scriptName(call: string, args: string[]): string {
    if (call.startsWith('FCALL')) return `function ${args[1] ?? '?'}`;
    const sha = call.startsWith('EVALSHA')
      ? (args[1] ?? '').toLowerCase()
      : // MONITOR shows bytes past ASCII as \x escapes: one character each, as parsed.
        createHash('sha1')
          .update(Buffer.from(args[1] ?? '', 'latin1'))
          .digest('hex');
    const key = Number(args[2]) > 0 && args[3] !== undefined ? ` on ${this.shape(args[3])}` : '';
    return this.names.get(sha) ?? `sha ${sha.slice(0, 8)}${key}`;
  }
}
