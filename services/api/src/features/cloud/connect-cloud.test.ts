import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import {
  NUMBER,
  OTHER_NUMBER,
  inputFor,
  cloudFixture,
  SIM_NUMBERS,
  type CloudFixture,
} from './cloud-fixture.js';
import { connectCloud } from './connect-cloud.js';

describe('cloud: connectCloud — /connect of a cloud device (in-memory Redis, the Cloud API simulator)', () => {
  let sim: CloudSimHandle;
  let f: CloudFixture;
  beforeEach(async () => {
    sim = await startCloudSim({ numbers: SIM_NUMBERS });
    f = cloudFixture(sim.url);
  });
  afterEach(() => sim.close());

  it('When the device holds no cloud configuration, then it is not cloud and nothing changes', async () => {
    expect(await connectCloud(f.d, 'dev-none')).to.deep.equal({ ok: false, reason: 'not_cloud' });
    expect(f.redis.published).to.deep.equal([]);
  });

  it('When the check passes, then it is connected, on the roster the senders scan, and announced', async () => {
    await f.cloudDevices.set('dev-a', inputFor(NUMBER));
    sim.updateNumber(NUMBER.id, { qualityRating: 'YELLOW' });
    const now = new Date('2026-11-30T12:00:00.000Z');
    expect(await connectCloud(f.d, 'dev-a', now)).to.deep.equal({ ok: true });
    expect(await f.cloudDevices.state('dev-a')).to.deep.equal({ status: 'connected', at: now.toISOString() });
    expect((await f.cloudDevices.profile('dev-a'))?.qualityRating).to.equal('YELLOW');
    // The session record every reader of a connection goes by says so too (the accept path's check).
    expect(await f.sessions.get('dev-a')).to.deep.include({
      status: 'connected',
      phone: NUMBER.displayPhoneNumber.replace(/\D/g, ''),
      name: NUMBER.verifiedName,
    });
    expect(await f.redis.smembers(keys.linkedDevices())).to.deep.equal(['dev-a']);
    expect(f.redis.published).to.deep.equal([{ channel: keys.devicesChannel(), message: 'dev-a' }]);
  });

  it('When its token expired at Meta, then it turns disconnected with the reason, off the roster, unannounced', async () => {
    await f.cloudDevices.set('dev-b', inputFor(OTHER_NUMBER));
    sim.expireToken(OTHER_NUMBER.accessToken);
    const outcome = await connectCloud(f.d, 'dev-b');
    expect(outcome).to.deep.include({ ok: false, reason: 'graph_refused', code: 190 });
    expect(await f.cloudDevices.state('dev-b')).to.deep.include({
      status: 'disconnected',
      reason: 'cloud_token_expired',
    });
    expect(await f.sessions.get('dev-b')).to.deep.include({
      status: 'disconnected',
      lastDisconnectReason: 'cloud_token_expired',
    });
    expect(await f.redis.smembers(keys.linkedDevices())).to.deep.equal([]);
    expect(f.redis.published).to.deep.equal([]);
  });
});
