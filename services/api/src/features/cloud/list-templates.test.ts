import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import { TemplateCatalog } from '../cloud-send/index.js';
import {
  NUMBER,
  OTHER_NUMBER,
  inputFor,
  cloudFixture,
  SIM_NUMBERS,
  unreachableGraph,
  type CloudFixture,
} from './cloud-fixture.js';
import { listTemplates } from './list-templates.js';

describe('cloud: listTemplates — GET /cloud/templates (in-memory Redis, the Cloud API simulator)', () => {
  let sim: CloudSimHandle;
  let f: CloudFixture;
  let deps: Parameters<typeof listTemplates>[0];
  const all = { refresh: false };
  beforeEach(async () => {
    // Each WABA has the sample templates: verification_code (AUTHENTICATION) and order_update (UTILITY).
    sim = await startCloudSim({ numbers: SIM_NUMBERS });
    f = cloudFixture(sim.url);
    deps = { cloudDevices: f.cloudDevices, templates: new TemplateCatalog(f.redis.client, f.graph) };
    await f.cloudDevices.set('dev-a', inputFor(NUMBER));
  });
  afterEach(() => sim.close());

  it('When the device is not a cloud number, then it is not cloud', async () => {
    expect(await listTemplates(deps, 'dev-none', all)).to.deep.equal({ ok: false, reason: 'not_cloud' });
  });

  it("When its number's WABA is listed, then every template is shown by name then language, with its parameters and components, and the list kept", async () => {
    sim.addTemplate({
      wabaId: NUMBER.wabaId,
      name: 'order_update',
      language: 'ar',
      category: 'UTILITY',
      status: 'PAUSED',
      components: [{ type: 'BODY', text: 'تم شحن طلبك {{1}}.' }],
    });
    const now = Date.parse('2026-11-30T12:00:00.000Z');
    const outcome = await listTemplates(deps, 'dev-a', all, now);
    expect(outcome).to.deep.equal({
      ok: true,
      data: {
        fetchedAt: '2026-11-30T12:00:00.000Z',
        templates: [
          {
            name: 'order_update',
            language: 'ar',
            status: 'PAUSED',
            category: 'UTILITY',
            parameters: { body: 1 },
            components: [{ type: 'BODY', text: 'تم شحن طلبك {{1}}.' }],
          },
          {
            name: 'order_update',
            language: 'en_US',
            status: 'APPROVED',
            category: 'UTILITY',
            parameters: { body: 1 },
            components: [{ type: 'BODY', text: 'Your order {{1}} has shipped.' }],
          },
          {
            name: 'verification_code',
            language: 'en_US',
            status: 'APPROVED',
            category: 'AUTHENTICATION',
            parameters: { body: 1, buttons: { 0: 1 } },
            components: [
              {
                type: 'BODY',
                text: '*{{1}}* is your verification code. For your security, do not share this code.',
              },
              { type: 'FOOTER', text: 'This code expires in 10 minutes.' },
              { type: 'BUTTONS', buttons: [{ type: 'OTP', text: 'Copy code', otpType: 'COPY_CODE' }] },
            ],
          },
        ],
      },
    });
    expect(await f.redis.client.exists(keys.cloudTemplates('dev-a'))).to.equal(1);
  });

  it('When the query names a name, a language or a status, then only the templates that have it exactly are shown', async () => {
    const names = async (query: Parameters<typeof listTemplates>[2]) => {
      const outcome = await listTemplates(deps, 'dev-a', query);
      if (!outcome.ok) throw new Error(outcome.reason);
      return outcome.data.templates.map((t) => `${t.name}/${t.language}/${t.status}`);
    };
    sim.addTemplate({
      wabaId: NUMBER.wabaId,
      name: 'order_update',
      language: 'ar',
      category: 'UTILITY',
      status: 'PAUSED',
      components: [],
    });
    expect(await names({ ...all, name: 'order_update' })).to.deep.equal([
      'order_update/ar/PAUSED',
      'order_update/en_US/APPROVED',
    ]);
    expect(await names({ ...all, name: 'order' })).to.deep.equal([]);
    expect(await names({ ...all, language: 'ar' })).to.deep.equal(['order_update/ar/PAUSED']);
    expect(await names({ ...all, status: 'APPROVED', name: 'order_update' })).to.deep.equal([
      'order_update/en_US/APPROVED',
    ]);
  });

  it("When Meta refuses the device's token, then the refusal says what Meta said about the token and the device's state is unchanged", async () => {
    await f.cloudDevices.set('dev-b', inputFor(OTHER_NUMBER));
    sim.expireToken(OTHER_NUMBER.accessToken);
    const outcome = await listTemplates(deps, 'dev-b', all);
    expect(outcome).to.deep.include({ ok: false, reason: 'graph_refused', code: 190, field: 'accessToken' });
    expect(JSON.stringify(outcome)).not.to.include(OTHER_NUMBER.accessToken);
    expect(await f.cloudDevices.state('dev-b')).to.equal(undefined);
  });

  it('When the Graph API cannot be reached, then with nothing kept it is unreachable, and with a list kept that list is answered', async () => {
    expect((await listTemplates(deps, 'dev-a', all, 0)).ok).to.equal(true);
    await f.cloudDevices.set('dev-b', inputFor(OTHER_NUMBER));
    const nowhere = await unreachableGraph();
    try {
      const cut = { ...deps, templates: new TemplateCatalog(f.redis.client, nowhere.graph) };
      expect(await listTemplates(cut, 'dev-b', all)).to.deep.equal({
        ok: false,
        reason: 'graph_unreachable',
      });
      const kept = await listTemplates(cut, 'dev-a', { refresh: true }, 60_000);
      expect(kept).to.deep.include({ ok: true });
      expect((kept as { data: { fetchedAt: string } }).data.fetchedAt).to.equal(new Date(0).toISOString());
    } finally {
      await nowhere.close();
    }
  });
});
