import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { NUMBER, inputFor, cloudFixture, SIM_NUMBERS, type CloudFixture } from './cloud-fixture.js';
import { cloudStatus } from './cloud-status.js';
import { connectCloud } from './connect-cloud.js';

describe('cloud: cloudStatus — GET /status of a cloud device (in-memory Redis)', () => {
  let sim: CloudSimHandle;
  let f: CloudFixture;
  before(async () => {
    sim = await startCloudSim({ numbers: SIM_NUMBERS });
    f = cloudFixture(sim.url);
  });
  after(() => sim.close());

  it('When a cloud device was never connected, then it is disconnected, without a reason', async () => {
    await f.cloudDevices.set('dev-new', inputFor(NUMBER));
    expect(await cloudStatus(f.d, 'dev-new')).to.deep.equal({
      success: true,
      status: 'disconnected',
      engine: 'cloud',
    });
    await f.cloudDevices.forget('dev-new');
  });

  it('When it is connected, then its number (digits only), verified name, quality rating and tier', async () => {
    await f.cloudDevices.set('dev-a', inputFor(NUMBER));
    await connectCloud(f.d, 'dev-a');
    expect(await cloudStatus(f.d, 'dev-a')).to.deep.equal({
      success: true,
      status: 'connected',
      engine: 'cloud',
      phone: '15550100001',
      name: NUMBER.verifiedName,
      qualityRating: 'GREEN',
      messagingTier: 'TIER_1K',
    });
  });

  it('When a failure disconnected it, then no number or name, and the reason', async () => {
    await f.cloudDevices.setState('dev-a', {
      status: 'disconnected',
      reason: 'cloud_token_expired',
      at: new Date().toISOString(),
    });
    expect(await cloudStatus(f.d, 'dev-a')).to.deep.equal({
      success: true,
      status: 'disconnected',
      engine: 'cloud',
      qualityRating: 'GREEN',
      messagingTier: 'TIER_1K',
      reason: 'cloud_token_expired',
    });
  });
});
