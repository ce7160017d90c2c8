import { createMetrics } from '@mgw/contracts';
import { Blocklist, ContactCache, ContactLookupCap, Encryption } from '@mgw/store';
import type { AccountDeps } from '../../../src/features/account/account-deps.js';
import type { HolderFixture } from '../../helpers/fake-holder.js';

/**
 * The account use cases' services over the fixture's Redis and holder, as the account routes
 * build them; `lookupsPerDay` is the number check's daily cap (0: none).
 */
export function accountDepsOf(fx: HolderFixture, lookupsPerDay = 0): AccountDeps {
  return {
    holder: fx.holder,
    sessions: fx.sessions,
    blocklist: new Blocklist(fx.redis),
    cache: new ContactCache(fx.redis),
    lookups: new ContactLookupCap(fx.redis, lookupsPerDay),
    metrics: createMetrics(),
    redis: fx.redis,
    encryption: Encryption.fromEnv(),
  };
}
