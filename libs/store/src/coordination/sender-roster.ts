import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/**
 * The roster of live senders, from which each computes its fair share of the devices. Every sender
 * beats into `keys.senders()` (scored by when its liveness expires, Redis clock) with the number of
 * devices it holds (`keys.senderLoads()`); the beat drops senders whose liveness ran out and
 * answers with the live ones and their loads, in one script (both keys share the `{senders}` hash
 * tag; see `lua/sender-roster-beat-2.lua`).
 */
const BEAT = storeScript<[string[], (string | null)[]]>('sender-roster-beat-2');
const LEAVE = storeScript<number>('sender-roster-leave-2');

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
