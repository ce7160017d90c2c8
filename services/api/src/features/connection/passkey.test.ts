import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { MemorySessions, MemoryRedis } from '../test-support.js';
import { handPasskey, passkeyLinkRuns, readPasskey } from './passkey.js';

/**
 * A passkey-gated link that is not running, without an API: the session records in memory, the
 * pairing record in an in-memory Redis (as the connection service writes it). A pairing whose
 * replica is alive is a script's question (LivenessSet): that part runs in the full suite
 * (connection/e2e/passkey-link.test.ts).
 */
describe('passkey: a passkey link that is not running (in-memory sessions and Redis)', () => {
  const deviceId = 'cs-1';
  let sessions: MemorySessions;
  let redis: MemoryRedis;

  beforeEach(() => {
    sessions = new MemorySessions();
    redis = new MemoryRedis();
  });

  it('When the session shows a passkey step but no pairing record, then no link runs', async () => {
    sessions.update(deviceId, 'connecting', {
      passkeyStep: 'assertion',
      passkeyExpiresAt: new Date().toISOString(),
    });
    expect(await passkeyLinkRuns(redis.client, deviceId)).to.equal(false);
  });

  it('When no passkey link waits on the device (no pairing, or one not running), then nothing to read and nothing handed in: none, no command published', async () => {
    const s = { redis: redis.client, bullRedis: redis.client, encryption: Encryption.fromEnv() };
    expect(await readPasskey(s, deviceId)).to.equal(undefined);
    expect(await handPasskey(s, deviceId, { code: '123456' })).to.deep.equal({ kind: 'none' });
    redis.hash(keys.pairing(deviceId), { passkeyStep: 'confirm_code' });
    expect(await handPasskey(s, deviceId, { code: '123456' })).to.deep.equal({ kind: 'none' });
    expect(redis.published).to.deep.equal([]);
  });
});
