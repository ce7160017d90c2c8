import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { NUMBER, inputFor, cloudFixture, SIM_NUMBERS, type CloudFixture } from './cloud-fixture.js';
import { showCloud } from './show-cloud.js';

describe('cloud: showCloud — GET /cloud (in-memory Redis)', () => {
  let sim: CloudSimHandle;
  let f: CloudFixture;
  before(async () => {
    sim = await startCloudSim({ numbers: SIM_NUMBERS });
    f = cloudFixture(sim.url);
  });
  after(() => sim.close());

  it('When the device is not a cloud number, then nothing is shown', async () => {
    expect(await showCloud(f.d, 'dev-none')).to.equal(undefined);
  });

  it('When it is, then its configuration without a secret, with its state and the reason that disconnected it', async () => {
    await f.cloudDevices.set('dev-a', inputFor(NUMBER), new Date('2026-11-30T10:00:00.000Z'));
    await f.cloudDevices.setState('dev-a', {
      status: 'disconnected',
      reason: 'cloud_token_expired',
      at: '2026-11-30T11:00:00.000Z',
    });
    const shown = await showCloud(f.d, 'dev-a');
    expect(shown).to.deep.equal({
      engine: 'cloud',
      phoneNumberId: NUMBER.id,
      wabaId: NUMBER.wabaId,
      throughputPerSecond: 80,
      graphVersion: 'v21.0',
      otpTemplate: 'verification_code',
      updatedAt: '2026-11-30T10:00:00.000Z',
      status: 'disconnected',
      reason: 'cloud_token_expired',
    });
  });
});
