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
import { configureCloud } from './configure-cloud.js';

describe('cloud: configureCloud — PUT /cloud (in-memory Redis, the Cloud API simulator)', () => {
  let sim: CloudSimHandle;
  let f: CloudFixture;
  beforeEach(async () => {
    sim = await startCloudSim({ numbers: SIM_NUMBERS });
    f = cloudFixture(sim.url);
  });
  afterEach(() => sim.close());

  it('When the credentials pass, then the device is that number, its secrets sealed, shown without them and disconnected until /connect', async () => {
    const now = new Date('2026-11-30T10:00:00.000Z');
    const outcome = await configureCloud(f.d, 'dev-a', { ...inputFor(NUMBER), throughputPerSecond: 40 }, now);
    expect(outcome).to.deep.equal({
      ok: true,
      data: {
        engine: 'cloud',
        phoneNumberId: NUMBER.id,
        wabaId: NUMBER.wabaId,
        throughputPerSecond: 40,
        graphVersion: 'v21.0',
        otpTemplate: 'verification_code',
        updatedAt: now.toISOString(),
        profile: {
          displayPhoneNumber: NUMBER.displayPhoneNumber,
          verifiedName: NUMBER.verifiedName,
          qualityRating: 'GREEN',
          messagingLimitTier: 'TIER_1K',
          checkedAt: now.toISOString(),
        },
        status: 'disconnected',
      },
    });
    expect(await f.cloudDevices.engineOf('dev-a')).to.equal('cloud');
    const raw = String(f.redis.values.get(keys.cloudDevice('dev-a')));
    for (const secret of [NUMBER.accessToken, NUMBER.appSecret, 'verify-me'])
      expect(raw).to.not.include(secret);
  });

  it('When the device has linked credentials, or a pairing of it runs, then it is refused as linked and nothing is stored', async () => {
    f.redis.values.set(keys.authCreds('dev-creds'), 'sealed-creds');
    expect(await configureCloud(f.d, 'dev-creds', inputFor(NUMBER))).to.deep.equal({
      ok: false,
      reason: 'device_linked',
    });
    f.redis.hash(keys.pairing('dev-pairing'), {
      pairingId: 'p1',
      owner: 'c1',
      state: 'showing',
      method: 'qrCode',
    });
    expect(await configureCloud(f.d, 'dev-pairing', inputFor(NUMBER))).to.deep.equal({
      ok: false,
      reason: 'device_linked',
    });
    expect(await f.cloudDevices.engineOf('dev-creds')).to.equal('linked');
    expect(await f.cloudDevices.engineOf('dev-pairing')).to.equal('linked');
  });

  it('When a pairing ended (failed), then it no longer stands in the way', async () => {
    f.redis.hash(keys.pairing('dev-b'), { pairingId: 'p1', owner: 'c1', state: 'failed', method: 'qrCode' });
    expect((await configureCloud(f.d, 'dev-b', inputFor(NUMBER))).ok).to.equal(true);
  });

  it('When Meta refuses the token, then nothing is stored and the refusal says what Meta said', async () => {
    const outcome = await configureCloud(f.d, 'dev-a', { ...inputFor(NUMBER), accessToken: 'wrong-token' });
    expect(outcome).to.deep.include({ ok: false, reason: 'graph_refused', code: 190, field: 'accessToken' });
    expect(await f.cloudDevices.engineOf('dev-a')).to.equal('linked');
  });

  it('When another device already is the number, then it is refused as taken; the device itself may configure it again', async () => {
    expect((await configureCloud(f.d, 'dev-a', inputFor(NUMBER))).ok).to.equal(true);
    expect(await configureCloud(f.d, 'dev-b', inputFor(NUMBER))).to.deep.equal({
      ok: false,
      reason: 'number_taken',
    });
    expect(await f.cloudDevices.engineOf('dev-b')).to.equal('linked');
    const again = await configureCloud(f.d, 'dev-a', { ...inputFor(NUMBER), otpTemplate: 'login_code' });
    expect(again.ok && again.data.otpTemplate).to.equal('login_code');
    // Moving dev-a to another number frees the first for dev-b.
    expect((await configureCloud(f.d, 'dev-a', inputFor(OTHER_NUMBER))).ok).to.equal(true);
    expect((await configureCloud(f.d, 'dev-b', inputFor(NUMBER))).ok).to.equal(true);
  });
});
