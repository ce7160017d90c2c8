import { expect } from 'chai';
import { keys, type DeviceCommandReply } from '@mgw/contracts';
import { MemoryHolder, said } from '../test-support.js';
import { MemoryAccountRedis } from './account-fixture.js';
import { setPresence } from './set-presence.js';

describe("setPresence: the account's presence set through the holder, kept on the session record (an in-memory holder and Redis)", () => {
  let mh: MemoryHolder;
  let redis: MemoryAccountRedis;
  const deps = () => ({ holder: mh.holder, redis });
  const deviceId = 'acc-1';

  beforeEach(() => {
    mh = new MemoryHolder();
    redis = new MemoryAccountRedis();
  });

  it('When the presence is set, then the answer is the holder’s and the session record keeps it with when; a nameless account is its no-name code and nothing is kept', async () => {
    const answers: DeviceCommandReply[] = [
      { ok: true, data: { presence: 'available' } } as DeviceCommandReply,
      { ok: false, error: 'no-name' },
    ];
    const heard = mh.device(deviceId, () => answers.shift());

    expect(await setPresence(deps(), deviceId, 'available')).to.deep.equal({
      ok: true,
      data: { presence: 'available' },
    });
    const kept = redis.hashes.get(keys.session(deviceId))!;
    expect(kept.presence).to.equal('available');
    expect(Date.now() - Date.parse(kept.presenceSetAt!)).to.be.within(0, 5000); // quiet: 1 ms

    expect(await setPresence(deps(), deviceId, 'unavailable')).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-name',
    });
    expect(redis.hashes.get(keys.session(deviceId))!.presence, 'unchanged').to.equal('available');
    expect(heard.map(said)).to.deep.equal([
      { type: 'account-presence-set', deviceId, presence: 'available' },
      { type: 'account-presence-set', deviceId, presence: 'unavailable' },
    ]);
  });
});
