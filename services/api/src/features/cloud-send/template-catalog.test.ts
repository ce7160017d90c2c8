import { expect } from 'chai';
import type { GraphTemplate } from '@mgw/cloud';
import { keys, type CloudDeviceConfig } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { TemplateCatalog, templateParams } from './template-catalog.js';

const config = (wabaId = '2001'): CloudDeviceConfig => ({
  phoneNumberId: '1001',
  wabaId,
  accessToken: 'token',
  appSecret: 'secret',
  verifyToken: 'verify',
  throughputPerSecond: 80,
  graphVersion: 'v21.0',
  otpTemplate: 'verification_code',
  updatedAt: '2026-01-01T00:00:00.000Z',
});
const template = (name: string, language: string, status = 'APPROVED'): GraphTemplate => ({
  id: `${name}-${language}`,
  name,
  language,
  status,
  category: 'UTILITY',
  components: [{ type: 'BODY', text: 'Order {{1}} for {{2}}, {{1}} again' }],
});

describe('TemplateCatalog: a number’s templates read once from the Graph API and kept', () => {
  let redis: MemoryRedis;
  let listed: GraphTemplate[];
  let calls: { wabaId: string }[];
  let failing: Error | undefined;
  const graph = {
    templates: async (n: { wabaId: string }) => {
      calls.push({ wabaId: n.wabaId });
      if (failing) throw failing;
      return listed;
    },
  };
  beforeEach(() => {
    redis = new MemoryRedis();
    listed = [template('order_update', 'en_US'), template('order_update', 'ar', 'PAUSED')];
    calls = [];
    failing = undefined;
  });
  const catalog = () => new TemplateCatalog(redis.client, graph, { ttlSeconds: 600, refreshFloorMs: 30_000 });

  it('When a template is asked for twice, then the Graph API is read once and the list is kept in Redis with its TTL', async () => {
    const named = await catalog().named('d1', config(), 'order_update', 1000);
    expect(named.map((t) => [t.language, t.status, t.params])).to.deep.equal([
      ['en_US', 'APPROVED', { body: 2 }],
      ['ar', 'PAUSED', { body: 2 }],
    ]);
    await catalog().named('d1', config(), 'order_update', 2000);
    expect(calls).to.have.length(1);
    expect(await redis.client.ttl(keys.cloudTemplates('d1'))).to.equal(600);
  });

  it('When a name is missing from the kept list, then the list is read again, but not within refreshFloorMs of the last read', async () => {
    const c = catalog();
    await c.named('d1', config(), 'order_update', 0);
    expect(await c.named('d1', config(), 'new_one', 10_000)).to.deep.equal([]);
    expect(calls).to.have.length(1);
    listed.push(template('new_one', 'en'));
    expect((await c.named('d1', config(), 'new_one', 40_000)).map((t) => t.language)).to.deep.equal(['en']);
    expect(calls).to.have.length(2);
  });

  it('When the device now names another WABA, then its kept list is not used', async () => {
    await catalog().named('d1', config('2001'), 'order_update', 0);
    await catalog().named('d1', config('2002'), 'order_update', 1);
    expect(calls).to.deep.equal([{ wabaId: '2001' }, { wabaId: '2002' }]);
  });

  it('When the Graph API fails and nothing is kept, then the read rejects with its error', async () => {
    failing = new Error('unreachable');
    let caught: unknown;
    await catalog()
      .named('d1', config(), 'order_update', 0)
      .catch((err: unknown) => (caught = err));
    expect(caught).to.equal(failing);
  });

  it("When a template's components are counted, then each placeholder counts once, media headers and code or URL buttons take one, quick replies none", () => {
    expect(
      templateParams([
        { type: 'HEADER', format: 'TEXT', text: 'Hi {{name}}' },
        { type: 'BODY', text: '{{1}} and {{2}} and {{ 1 }}' },
        { type: 'FOOTER', text: 'no {{x}} counted' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Yes' },
            { type: 'URL', url: 'https://example.com/{{1}}' },
            { type: 'URL', url: 'https://example.com/' },
            { type: 'OTP', otp_type: 'COPY_CODE' },
          ],
        },
      ]),
    ).to.deep.equal({ header: 1, body: 2, buttons: { 1: 1, 3: 1 } });
    expect(
      templateParams([
        { type: 'HEADER', format: 'IMAGE' },
        { type: 'BODY', text: 'plain' },
      ]),
    ).to.deep.equal({
      header: 1,
      body: 0,
    });
    expect(templateParams([null, 'x', { type: 7 }, { type: 'BUTTONS', buttons: 'no' }])).to.deep.equal({});
  });
});
