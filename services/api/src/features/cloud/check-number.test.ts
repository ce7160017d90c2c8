import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { checkNumber } from './check-number.js';
import {
  NUMBER,
  OTHER_NUMBER,
  cloudFixture,
  SIM_NUMBERS,
  unreachableGraph,
  type CloudFixture,
} from './cloud-fixture.js';

describe('cloud: checkNumber — the credentials asked of the Graph API (the Cloud API simulator)', () => {
  let sim: CloudSimHandle;
  let f: CloudFixture;
  before(async () => {
    sim = await startCloudSim({ numbers: SIM_NUMBERS });
    f = cloudFixture(sim.url);
  });
  after(() => sim.close());

  const n = (over: Partial<Record<'phoneNumberId' | 'accessToken', string>> = {}) => ({
    phoneNumberId: NUMBER.id,
    wabaId: NUMBER.wabaId,
    accessToken: NUMBER.accessToken,
    ...over,
  });

  it('When the token reaches the number, then what the number says of itself is answered', async () => {
    const now = new Date('2026-11-30T10:00:00.000Z');
    expect(await checkNumber(f.graph, n(), now)).to.deep.equal({
      ok: true,
      profile: {
        displayPhoneNumber: NUMBER.displayPhoneNumber,
        verifiedName: NUMBER.verifiedName,
        qualityRating: 'GREEN',
        messagingLimitTier: 'TIER_1K',
        checkedAt: now.toISOString(),
      },
    });
  });

  it('When the token is unknown to Meta, then it is refused (190) about the token, the device reason token expired, and the token is not in the message', async () => {
    const checked = await checkNumber(f.graph, n({ accessToken: 'not-a-token-of-meta' }));
    expect(checked).to.deep.include({
      ok: false,
      reason: 'graph_refused',
      code: 190,
      field: 'accessToken',
      deviceReason: 'cloud_token_expired',
    });
    expect(JSON.stringify(checked)).to.not.include('not-a-token-of-meta');
  });

  it('When the token expired, then it is refused with 190 and its subcode', async () => {
    sim.expireToken(OTHER_NUMBER.accessToken);
    const checked = await checkNumber(f.graph, {
      phoneNumberId: OTHER_NUMBER.id,
      wabaId: OTHER_NUMBER.wabaId,
      accessToken: OTHER_NUMBER.accessToken,
    });
    expect(checked).to.deep.include({ ok: false, reason: 'graph_refused', code: 190, subcode: 463 });
  });

  it('When the number id is not one the token reaches, then it is refused (100) about the number id', async () => {
    const checked = await checkNumber(f.graph, n({ phoneNumberId: '999999' }));
    expect(checked).to.deep.include({
      ok: false,
      reason: 'graph_refused',
      code: 100,
      field: 'phoneNumberId',
    });
  });

  it('When the Graph URL hangs up without an answer, then it is unreachable (nothing known of the credentials)', async () => {
    const nowhere = await unreachableGraph();
    try {
      expect(await checkNumber(nowhere.graph, n())).to.deep.equal({ ok: false, reason: 'graph_unreachable' });
    } finally {
      await nowhere.close();
    }
  });
});
