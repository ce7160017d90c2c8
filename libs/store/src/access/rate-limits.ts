import { masterNodes, RedisScript, type RedisClient } from '@mgw/common';
import { storeScript } from '../lua.js';

/**
 * The API's rate-limit counters: fixed windows per token and endpoint, shared by every replica.
 * The endpoints' limiters are express-rate-limit with rate-limit-redis (its keys, windows and
 * scripts); `/send` counts its hits itself, with the same rule.
 */

/**
 * Adds a counter's hits of one turn in one call (see `lua/rate-limit-increment-1.lua`): run by the
 * API's express-rate-limit store through rate-limit-redis's commands (`rateLimitCommands`), beside
 * rate-limit-redis's own scripts, so it loads it (SCRIPT LOAD) and calls it by SHA like them.
 */
export const RATE_LIMIT_INCREMENT = storeScript<[number, number]>('rate-limit-increment-1');

/** One hit in a fixed window, rate-limit-redis's rule (see `lua/rate-limit-hit-1.lua`). */
const COUNT_HIT = storeScript<[number, number]>('rate-limit-hit-1');

/**
 * Counts one `/send` hit of a token (`keys.sendRateLimit`): a counter that has expired, or never
 * existed, starts a new window of `windowMs` at this hit. Returns the window's total and the ms
 * left in it.
 */
export async function countRateLimitHit(
  redis: RedisClient,
  key: string,
  windowMs: number,
): Promise<{ total: number; ttlMs: number }> {
  const [total, ttlMs] = await COUNT_HIT.run(redis, [key], [windowMs]);
  return { total: Number(total), ttlMs: Number(ttlMs) };
}

/** A command as rate-limit-redis sends it (the details of its `sendCommandCluster`). */
export interface RateLimitCommand {
  key?: string;
  isReadOnly: boolean;
  command: string[];
}

/** A reply as rate-limit-redis reads it. */
export type RateLimitReply = boolean | number | string | (boolean | number | string)[];

/**
 * rate-limit-redis's `sendCommandCluster` over `client`, for a single Redis and a Cluster alike.
 * rate-limit-redis runs its scripts by SHA. On a Cluster a script must be on the master of each
 * counter's slot, and a replica promoted by a failover starts without any: SCRIPT LOAD goes to
 * every master, and a script loaded so runs through the script runner (EVALSHA, then EVAL with the
 * script's text on NOSCRIPT; the store's own reload-and-retry would load it on masters the client
 * may not know yet). Other commands (GET, DECR, DEL) go as they are.
 */
export function rateLimitCommands(
  client: RedisClient,
): (details: RateLimitCommand) => Promise<RateLimitReply> {
  const scripts = new Map<string, RedisScript>();
  return async ({ command: [name, ...args] }) => {
    const command = name!.toUpperCase();
    if (command === 'SCRIPT' && args[0]?.toUpperCase() === 'LOAD') {
      // Only ever run (never defined on a connection): the name is a label.
      const script = new RedisScript('rateLimitRedisScript', args[1]!);
      scripts.set(script.sha, script);
      const loaded = await Promise.allSettled(masterNodes(client).map((n) => n.script('LOAD', args[1]!)));
      const failed = loaded.find((r) => r.status === 'rejected');
      if (failed && loaded.every((r) => r.status === 'rejected')) throw failed.reason;
      return script.sha;
    }
    const script = command === 'EVALSHA' ? scripts.get(args[0]!) : undefined;
    if (script) {
      const numKeys = Number(args[1]);
      return (await script.run(
        client,
        args.slice(2, 2 + numKeys),
        args.slice(2 + numKeys),
      )) as RateLimitReply;
    }
    return (await client.call(name!, ...args)) as RateLimitReply;
  };
}
