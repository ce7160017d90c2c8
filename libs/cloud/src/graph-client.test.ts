import { expect } from 'chai';
import { parseAllowedPrivateHosts } from '@mgw/common';
import { FAILURE_REASONS } from '@mgw/contracts';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { GraphClient, type GraphNumber } from './graph-client.js';
import { GraphError, GraphUnreachableError, graphVerdict } from './graph-errors.js';

const NUMBER = {
  id: '1001',
  wabaId: '2001',
  displayPhoneNumber: '+1 555-010-0001',
  verifiedName: 'Shop',
  accessToken: 'token-1',
  appSecret: 'secret-1',
};

describe('GraphClient against the Cloud API simulator', () => {
  let sim: CloudSimHandle;
  let graph: GraphClient;
  const number: GraphNumber = {
    phoneNumberId: NUMBER.id,
    wabaId: NUMBER.wabaId,
    accessToken: NUMBER.accessToken,
    graphVersion: 'v21.0',
  };

  before(async () => {
    sim = await startCloudSim({ numbers: [NUMBER] });
    graph = new GraphClient({ baseUrl: sim.url, allowList: parseAllowedPrivateHosts('127.0.0.1') });
  });
  after(() => sim.close());

  it('When the number is read, then its profile comes back as the Graph node says', async () => {
    const profile = await graph.phoneNumber(number, new Date('2026-11-30T00:00:00Z'));
    expect(profile).to.deep.equal({
      displayPhoneNumber: '+1 555-010-0001',
      verifiedName: 'Shop',
      qualityRating: 'GREEN',
      messagingLimitTier: 'TIER_1K',
      checkedAt: '2026-11-30T00:00:00.000Z',
    });
  });

  it('When a template is sent, then Meta answers its wamid and the contact, and the sim holds it', async () => {
    const sent = await graph.send(number, {
      to: '+1 (555) 010-2000',
      type: 'template',
      template: { name: 'verification_code', language: { code: 'en_US' } },
    });
    expect(sent.wamid).to.match(/^wamid\./);
    expect(sent.waId).to.equal('15550102000');
    expect(sim.sent(NUMBER.id).map((m) => m.id)).to.include(sent.wamid);
  });

  it('When a free-form text goes to a contact without a window, then the error is 131047, window_closed', async () => {
    const err = await graph
      .send(number, { to: '15550103000', type: 'text', text: { body: 'hi' } })
      .catch((e) => e);
    expect(err).to.be.instanceOf(GraphError);
    expect(err.code).to.equal(131047);
    expect(graphVerdict(err)).to.deep.equal({ reason: FAILURE_REASONS.windowClosed, retry: false });
  });

  it('When media is uploaded, then its id sends an image to a contact whose window is open', async () => {
    sim.inbound(NUMBER.id, { from: '15550104000', text: 'hello' });
    const id = await graph.uploadMedia(
      number,
      Buffer.from('\x89PNG\r\n\x1a\n0000'),
      'image/png',
      'a"b\r\n.png',
    );
    const sent = await graph.send(number, { to: '15550104000', type: 'image', image: { id } });
    expect(sent.wamid).to.match(/^wamid\./);
  });

  it('When the templates are listed, then every page of the WABA comes back', async () => {
    for (let i = 0; i < 150; i++)
      sim.addTemplate({
        wabaId: NUMBER.wabaId,
        name: `promo_${i}`,
        language: 'en_US',
        category: 'MARKETING',
        status: 'APPROVED',
        components: [{ type: 'BODY', text: 'Hi {{1}}' }],
      });
    const all = await graph.templates(number);
    expect(all.filter((t) => t.name.startsWith('promo_'))).to.have.length(150);
    const one = await graph.templates(number, 'verification_code');
    expect(one.map((t) => [t.name, t.category])).to.deep.equal([['verification_code', 'AUTHENTICATION']]);
  });

  it('When the token expired, then the error is 190 and the verdict disconnects the device', async () => {
    sim.addNumber({ ...NUMBER, id: '1002', accessToken: 'token-2' });
    sim.expireToken('token-2');
    const err = await graph
      .phoneNumber({ ...number, phoneNumberId: '1002', accessToken: 'token-2' })
      .catch((e) => e);
    expect(err).to.be.instanceOf(GraphError);
    expect(err).to.include({ status: 401, code: 190, subcode: 463 });
    expect(graphVerdict(err)).to.include({ reason: FAILURE_REASONS.cloudTokenExpired, disconnect: true });
    // Meta's words are kept; the token never is.
    expect(err.message).not.to.contain('token-2');
  });

  it('When the Graph host is loopback and not allowed, then nothing leaves and the error says so', async () => {
    const guarded = new GraphClient({ baseUrl: sim.url });
    const before = sim.sent().length;
    const err = await guarded
      .send(number, {
        to: '15550102000',
        type: 'template',
        template: { name: 'verification_code', language: { code: 'en_US' } },
      })
      .catch((e) => e);
    expect(err).to.be.instanceOf(GraphUnreachableError);
    expect(err.reached).to.equal(false);
    expect(sim.sent()).to.have.length(before);
  });
});

describe('graphVerdict', () => {
  it('When a code has no row, then the HTTP status decides: 5xx retries, 429 is a rate limit, 4xx a refusal', () => {
    expect(graphVerdict(new GraphError(503, 99999, 'x'))).to.deep.equal({
      reason: FAILURE_REASONS.sendFailed,
      retry: true,
    });
    expect(graphVerdict(new GraphError(429, 99999, 'x'))).to.deep.equal({
      reason: FAILURE_REASONS.rateLimited,
      retry: true,
    });
    expect(graphVerdict(new GraphError(400, 99999, 'x'))).to.deep.equal({
      reason: FAILURE_REASONS.rejectedByServer,
      retry: false,
    });
    expect(graphVerdict(new GraphError(403, 230, 'x'))).to.include({ disconnect: true });
    // `constructor`, `toString`: a code is looked up as an own row only.
    expect(graphVerdict(new GraphError(400, Number('constructor'), 'x')).reason).to.equal(
      FAILURE_REASONS.rejectedByServer,
    );
  });
});
