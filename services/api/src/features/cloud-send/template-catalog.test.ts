import { expect } from 'chai';
import type { GraphTemplate } from '@mgw/cloud';
import { keys, type CloudDeviceConfig } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { TemplateCatalog } from './template-catalog.js';

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

  it('When the whole list is asked for, then the kept one is answered; a refresh reads it again only once the floor has passed', async () => {
    const c = catalog();
    const first = await c.all('d1', config(), { now: 1000 });
    expect(first.fetchedAt).to.equal(1000);
    expect(first.templates.map((t) => [t.name, t.language, t.components])).to.deep.equal([
      ['order_update', 'en_US', [{ type: 'BODY', text: 'Order {{1}} for {{2}}, {{1}} again' }]],
      ['order_update', 'ar', [{ type: 'BODY', text: 'Order {{1}} for {{2}}, {{1}} again' }]],
    ]);
    listed.push(template('new_one', 'en'));
    expect((await c.all('d1', config(), { now: 5000 })).templates).to.have.length(2);
    // Within the floor a refresh is the kept list: a stream of refreshes is no stream of Graph calls.
    expect((await c.all('d1', config(), { refresh: true, now: 30_999 })).fetchedAt).to.equal(1000);
    expect(calls).to.have.length(1);
    const refreshed = await c.all('d1', config(), { refresh: true, now: 31_000 });
    expect([refreshed.fetchedAt, refreshed.templates.length]).to.deep.equal([31_000, 3]);
    expect(calls).to.have.length(2);
    // named() goes by the same read: the new template is there without another call.
    expect(await c.named('d1', config(), 'new_one', 31_001)).to.have.length(1);
    expect(calls).to.have.length(2);
  });

  it('When a refresh meets a Graph failure, then the kept list is answered; with none kept, the error', async () => {
    const c = catalog();
    await c.all('d1', config(), { now: 0 });
    failing = new Error('unreachable');
    expect((await c.all('d1', config(), { refresh: true, now: 60_000 })).fetchedAt).to.equal(0);
    expect(calls).to.have.length(2);
    let caught: unknown;
    await c.all('d2', config(), { now: 60_000 }).catch((err: unknown) => (caught = err));
    expect(caught).to.equal(failing);
  });

  it('When requests miss the list at once, then one Graph call serves them all', async () => {
    const c = catalog();
    const lists = await Promise.all([
      c.all('d1', config(), { now: 0 }),
      c.all('d1', config(), { now: 0 }),
      c.named('d1', config(), 'order_update', 0),
    ]);
    expect(calls).to.have.length(1);
    expect(lists[0]).to.deep.equal(lists[1]);
  });

  it('When the kept list is from before templates had their components, then it is read again', async () => {
    const { components: _gone, ...old } = (await catalog().all('d1', config(), { now: 0 })).templates[0]!;
    await redis.client.set(
      keys.cloudTemplates('d1'),
      JSON.stringify({ wabaId: '2001', fetchedAt: 0, templates: [old] }),
    );
    expect((await catalog().all('d1', config(), { now: 1 })).templates[0]!.components).to.have.length(1);
    expect(calls).to.have.length(2);
  });
});
