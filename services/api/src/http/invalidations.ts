import { Subscription, type Logger, type RedisClient } from '@mgw/common';

/** How long the API's start waits for a cache's subscription before serving without the cache. */
const START_WAIT_MS = 5000;

/**
 * The subscription that keeps one of the API's caches true (token-cache.ts, workspace-cache.ts):
 * `drop(message)` for each invalidation published on `channel`, and `dropAll()` when the
 * subscription is lost or (re)confirmed, since invalidations sent while not subscribed are lost.
 * Resolves once Redis has confirmed it, or after START_WAIT_MS without it: the cache is used only
 * while `subscribed`, so the API serves without it meanwhile.
 */
export async function startInvalidations(opts: {
  subscriber: RedisClient;
  channel: string;
  drop: (message: string) => void;
  dropAll: () => void;
  logger: Logger;
}): Promise<Subscription> {
  const subscription = new Subscription({
    client: opts.subscriber,
    channels: [opts.channel],
    onMessage: (_channel, message) => opts.drop(message),
    onLost: opts.dropAll,
    onSubscribed: opts.dropAll,
    logger: opts.logger,
  });
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, START_WAIT_MS)));
  await Promise.race([subscription.start(), waited]).finally(() => clearTimeout(timer));
  return subscription;
}
