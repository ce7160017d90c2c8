/**
 * What the fleet benches share (fleet.bench.ts, behind-schedule.bench.ts): one sender of the
 * built services in sandbox mode with the production pacing and lease timings, the simulator as a
 * process of its own; devices linked 8 at a time and given lists to new contacts; the sender's
 * figures read from /proc and its /metrics.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { keys } from '@mgw/contracts';
import { TokenStore } from '@mgw/store';
import { Stack, type ServiceProcess } from '@mgw/testing';
import type { Redis } from 'ioredis';
import { countBy, holders } from './density.js';

/** The default pacing: SEND_MIN_GAP_MS and SEND_GAP_JITTER_MS. */
export const GAP_MS = 1000;
export const JITTER_MS = 500;
const LINK_PARALLEL = 8;

/**
 * A stack of one sender (built, simulator in its own process), production pacing and lease
 * timings; `serviceRoot`: the services of another tree's build (an earlier release,
 * `buildPreviousVersion`), the simulator staying this checkout's.
 */
export function startFleetStack(serviceRoot?: string): Promise<Stack> {
  return Stack.start({
    senders: 1,
    built: true,
    simulatorProcess: true,
    ...(serviceRoot ? { serviceRoot } : {}),
    env: {
      SEND_MIN_GAP_MS: String(GAP_MS),
      SEND_GAP_JITTER_MS: String(JITTER_MS),
      LEASE_TTL_MS: '15000',
      LEASE_RENEW_MS: '5000',
      LEASE_SCAN_MS: '3000',
      LOG_LEVEL: 'warn',
    },
  });
}

/** A process's resident set (MiB) and CPU time so far (s), from /proc. */
export function procStats(pid: number): { rssMiB: number; cpuSeconds: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
  return { rssMiB: rssKiB / 1024, cpuSeconds: ticks / 100 };
}

/** A service's /metrics page. */
export async function metrics(p: ServiceProcess): Promise<string> {
  return (await fetch(`http://127.0.0.1:${p.port}/metrics`)).text();
}

/** One sample of a /metrics page (`name` with its labels as printed), 0 when absent. */
export function metric(text: string, name: string): number {
  const m = new RegExp(`^${name.replace(/[{}]/g, '\\$&')} ([0-9.e+-]+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** Lease renewals of a /metrics page with this outcome (renewed, restored, lost, unknown). */
export const renewals = (text: string, outcome: string) =>
  metric(text, `mgw_lease_renewals_total{outcome="${outcome}"}`);

/** "lease lost" log lines a service printed so far. */
export const lostLines = (p: ServiceProcess) => p.output.filter((l) => l.includes('lease lost')).length;

/** Messages the sender of a /metrics page sent so far. */
export const sent = (text: string) => metric(text, 'mgw_messages_total{status="sent"}');

/** What writes a device's API token: this build's `TokenStore`, or an earlier release's. */
export interface TokenWriter {
  create(input: { name: string; deviceId: string }): Promise<{ value: string }>;
}

/**
 * The `TokenStore` of another tree's build (`root`, e.g. an earlier release), on `redis`: its
 * services read the tokens it writes, whatever this build's format is.
 */
export async function tokenStoreOf(root: string, redis: Stack['redis']): Promise<TokenWriter> {
  const store = (await import(pathToFileURL(path.join(root, 'libs/store/dist/index.js')).href)) as {
    TokenStore: new (r: Stack['redis']) => TokenWriter;
  };
  return new store.TokenStore(redis);
}

/** The devices of a fleet bench: linked to the stack's simulator, each with its own token. */
export class Fleet {
  readonly linked: { deviceId: string; token: string }[] = [];
  private readonly tokens: TokenWriter;

  /** `tokens`: what writes the devices' tokens (default this build's `TokenStore`). */
  constructor(
    private readonly stack: Stack,
    tokens?: TokenWriter,
  ) {
    this.tokens = tokens ?? new TokenStore(stack.redis);
  }

  /** Links devices (8 at a time) until `n` are linked; prints how long it took. */
  async linkUpTo(n: number): Promise<void> {
    const t0 = performance.now();
    while (this.linked.length < n) {
      const batch = Array.from(
        { length: Math.min(LINK_PARALLEL, n - this.linked.length) },
        (_, k) => this.linked.length + k,
      );
      const done = await Promise.all(
        batch.map(async (i) => {
          const deviceId = `fleet-${i}`;
          const { value } = await this.tokens.create({ name: 'fleet bench', deviceId });
          await this.stack.linkByQr(`1555770${String(i).padStart(4, '0')}`, `Fleet ${i}`, value);
          return { deviceId, token: value };
        }),
      );
      this.linked.push(...done);
    }
    console.log(`  linked ${n} devices (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }

  /** How many of the linked devices each sender pid holds the lease of ('': no holder). */
  async holders(): Promise<Map<string, number>> {
    return countBy(
      await holders(
        this.stack.redis as Redis,
        this.linked.map((d) => d.deviceId),
      ),
    );
  }

  /** Whether every linked device's session says `connected`. */
  async allConnected(): Promise<boolean> {
    const pipe = this.stack.redis.pipeline();
    for (const d of this.linked) pipe.hget(keys.session(d.deviceId), 'status');
    return ((await pipe.exec()) ?? []).every(([, s]) => s === 'connected');
  }

  /** Whether the sender `pid` holds every linked device and each is connected. */
  async allHeldBy(pid: number): Promise<boolean> {
    return (await this.holders()).get(String(pid)) === this.linked.length && (await this.allConnected());
  }

  /**
   * The first `devices` devices each send one `list`-recipient list to new contacts (numbers no
   * other device sends to; `prefix` starts them: another prefix, other new contacts), all at once;
   * resolves when the API has accepted every list (202), with each device's message ids.
   */
  async sendLists(
    devices: number,
    list: number,
    text: string,
    prefix = '1555',
  ): Promise<{ deviceId: string; messageIds: string[] }[]> {
    const width = Math.max(3, String(list - 1).length);
    return Promise.all(
      this.linked.slice(0, devices).map(async (d, i) => {
        const to = Array.from(
          { length: list },
          (_, k) => `${prefix}${String(i).padStart(4, '0')}${String(k).padStart(width, '0')}`,
        );
        const res = await this.stack.api<{ messageIds: string[] }>(
          'POST',
          '/send',
          { to, text: `${text} ${i}` },
          d.token,
        );
        if (res.status !== 202) throw new Error(`send ${res.status} ${JSON.stringify(res.body)}`);
        return { deviceId: d.deviceId, messageIds: res.body.messageIds };
      }),
    );
  }

  /**
   * Each device's pace over its list: the paced ideal of its (list − 1) gaps at the mean gap
   * (`meanGapMs`) over the time from its first message's `sentAt` to its last one's (the first
   * message's lookup and, with typing, its planned typing after the idle spell are not pace).
   */
  async paces(lists: { deviceId: string; messageIds: string[] }[], meanGapMs: number): Promise<number[]> {
    const pipe = this.stack.redis.pipeline();
    for (const l of lists) for (const id of l.messageIds) pipe.hget(keys.message(l.deviceId, id), 'sentAt');
    const sentAt = ((await pipe.exec()) ?? []).map(([, v]) => Date.parse(v as string));
    let at = 0;
    return lists.map((l) => {
      const times = sentAt.slice(at, (at += l.messageIds.length));
      const span = Math.max(...times) - Math.min(...times);
      return ((l.messageIds.length - 1) * meanGapMs) / span;
    });
  }
}
