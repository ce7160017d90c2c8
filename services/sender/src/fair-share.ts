import { RedisScript, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

/**
 * The roster of live senders and the fair share that follows from it. Every sender beats into
 * `keys.senders()` (scored by when its liveness expires, Redis clock) with the number of devices
 * it holds (`keys.senderLoads()`); the beat drops senders whose liveness ran out and answers with
 * the live ones and their loads, in one script (both keys share the `{senders}` hash tag).
 */
const BEAT = new RedisScript<[string[], (string | null)[]]>(
  'mgwSenderBeat',
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
for _, dead in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  redis.call('ZREM', KEYS[1], dead)
  redis.call('HDEL', KEYS[2], dead)
end
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
return {live, redis.call('HMGET', KEYS[2], unpack(live))}
`,
);

const LEAVE = new RedisScript<number>(
  'mgwSenderLeave',
  `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`,
);

const rosterKeys = () => [keys.senders(), keys.senderLoads()];

export interface RosterView {
  /** Live senders (this one included) and the devices each reported holding. */
  loads: Map<string, number>;
}

export class SenderRoster {
  constructor(
    private readonly redis: RedisClient,
    readonly owner: string,
    private readonly ttlMs: number,
  ) {}

  /** Says this sender is alive and holds `held` devices; returns every live sender's load. */
  async beat(held: number): Promise<RosterView> {
    const [live, loads] = await BEAT.run(this.redis, rosterKeys(), [this.owner, this.ttlMs, held]);
    return { loads: new Map(live.map((owner, i) => [owner, Number(loads[i] ?? 0)])) };
  }

  /** Leaves the roster at once (shutdown), so the others' shares grow without waiting for the TTL. */
  async leave(): Promise<void> {
    await LEAVE.run(this.redis, rosterKeys(), [this.owner]);
  }
}

/** ceil(linked / live senders), capped by `cap` (0 = no cap). */
export function fairShare(linked: number, liveSenders: number, cap: number): number {
  const share = Math.ceil(linked / Math.max(1, liveSenders));
  return cap > 0 ? Math.min(cap, share) : share;
}

/**
 * Which devices an over-share sender gives to whom: the excess over its share goes to the live
 * senders below their share, least loaded first, each up to what it lacks. Nothing is given when
 * nobody can take it (everyone at the share or the cap).
 */
export function planHandovers(
  self: string,
  held: readonly string[],
  view: RosterView,
  share: number,
): { deviceId: string; to: string }[] {
  let excess = held.length - share;
  if (excess <= 0) return [];
  const takers = [...view.loads]
    .filter(([owner, load]) => owner !== self && load < share)
    .sort((a, b) => a[1] - b[1]);
  const plan: { deviceId: string; to: string }[] = [];
  let next = held.length - 1;
  for (const [owner, load] of takers) {
    for (let room = share - load; room > 0 && excess > 0; room--, excess--)
      plan.push({ deviceId: held[next--]!, to: owner });
    if (excess === 0) break;
  }
  return plan;
}
