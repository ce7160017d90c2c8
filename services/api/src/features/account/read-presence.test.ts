import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { MemoryAccountRedis } from './account-fixture.js';
import { readPresence } from './read-presence.js';

describe("readPresence: the account's own presence, from the session record (an in-memory Redis)", () => {
  let redis: MemoryAccountRedis;
  const deviceId = 'acc-1';

  beforeEach(() => {
    redis = new MemoryAccountRedis();
  });

  it('When the presence is read, then what PUT /presence set during the current connection; otherwise (set before it, no connection, nothing set) unavailable', async () => {
    const key = keys.session(deviceId);
    redis.hashes.set(key, {
      status: 'connected',
      connectedAt: '2026-01-01T10:00:00.000Z',
      presence: 'available',
      presenceSetAt: '2026-01-01T10:05:00.000Z',
    });
    expect(await readPresence({ redis }, deviceId)).to.deep.equal({
      presence: 'available',
      setAt: '2026-01-01T10:05:00.000Z',
    });
    // A reconnection since: the account is connected offline again.
    redis.hashes.get(key)!.connectedAt = '2026-01-01T11:00:00.000Z';
    expect(await readPresence({ redis }, deviceId)).to.deep.equal({ presence: 'unavailable' });
    redis.hashes.get(key)!.connectedAt = '2026-01-01T09:00:00.000Z';
    redis.hashes.get(key)!.status = 'connecting';
    expect(await readPresence({ redis }, deviceId)).to.deep.equal({ presence: 'unavailable' });
    expect(await readPresence({ redis }, 'never-linked')).to.deep.equal({ presence: 'unavailable' });
  });
});
