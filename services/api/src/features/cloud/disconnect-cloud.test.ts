import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import { NUMBER, inputFor, cloudFixture, SIM_NUMBERS, type CloudFixture } from './cloud-fixture.js';
import { connectCloud } from './connect-cloud.js';
import { disconnectCloud } from './disconnect-cloud.js';

describe('cloud: disconnectCloud — /disconnect and DELETE /cloud (in-memory Redis)', () => {
  let sim: CloudSimHandle;
  let f: CloudFixture;
  before(async () => {
    sim = await startCloudSim({ numbers: SIM_NUMBERS });
    f = cloudFixture(sim.url);
  });
  after(() => sim.close());

  it('When the device is no cloud number, then false and nothing is announced', async () => {
    expect(await disconnectCloud(f.d, 'dev-none')).to.equal(false);
    expect(f.redis.published).to.deep.equal([]);
  });

  it('When a connected cloud device is disconnected, then its configuration and state are gone, it leaves the roster and its holder hears', async () => {
    await f.cloudDevices.set('dev-a', inputFor(NUMBER));
    await connectCloud(f.d, 'dev-a');
    f.redis.published.length = 0;
    expect(await disconnectCloud(f.d, 'dev-a')).to.equal(true);
    expect(await f.cloudDevices.engineOf('dev-a')).to.equal('linked');
    expect(await f.cloudDevices.state('dev-a')).to.equal(undefined);
    expect(await f.cloudDevices.deviceOfNumber(NUMBER.id)).to.equal(undefined);
    expect(await f.redis.smembers(keys.linkedDevices())).to.deep.equal([]);
    expect(f.redis.published).to.deep.equal([{ channel: keys.devicesChannel(), message: 'dev-a' }]);
  });
});
