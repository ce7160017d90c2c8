import { expect } from 'chai';
import { ERRORS, LABEL_ERRORS, keys } from '@mgw/contracts';
import { LabelStore } from '@mgw/store';
import { RedisMonitor } from '@mgw/testing';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * The label reads against the real app and Redis: GET /labels and GET /labels/:labelId/chats answer
 * from the device's label store (written here as the device's holder writes it from app-state
 * sync), with validation naming the field, 404 for a label the device does not know, device-scoped
 * and pool tokens, and the Redis cost of GET /status. Every answer is checked against the OpenAPI
 * document by `call`; the whole way through the real client and the simulator is
 * services/sender/test/e2e/labels.test.ts.
 */
describe('Label reads (GET /labels, GET /labels/:labelId/chats)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let store: LabelStore;

  before(async () => {
    t = await startApi({ rateLimits: { status: 1000, groups: 1000 } });
    store = new LabelStore(t.redis, t.services.encryption);
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
  });
  after(() => t.close());

  const api = (path: string, opts: Parameters<typeof call>[1] = {}) =>
    call(`${t.api}${path}`, { token, ...opts });

  it('When the device learned labels and their chats, then GET /labels lists them with counts and the chats page by `after`', async () => {
    await markConnected(t.redis, deviceId);
    await store.edit(deviceId, { id: '5', name: 'VIP', color: 3, deleted: false });
    await store.edit(deviceId, { id: '12', name: 'New order', color: 1, deleted: false, predefinedId: '3' });
    for (const chat of ['15550000002', '15550000001', '120363000000000001@g.us'])
      await store.associate(deviceId, '5', chat, true);
    const list = await api('/labels');
    expect(list.status).to.equal(200);
    expect(list.body).to.deep.equal({
      success: true,
      data: {
        total: 2,
        labels: [
          { id: '5', name: 'VIP', color: 3, chats: 3 },
          { id: '12', name: 'New order', color: 1, predefinedId: '3', chats: 0 },
        ],
      },
    });
    const first = await api('/labels/5/chats?limit=2');
    expect(first.body).to.deep.equal({
      success: true,
      data: { labelId: '5', chats: ['120363000000000001@g.us', '15550000001'], next: '15550000001' },
    });
    const rest = await api('/labels/5/chats?limit=2&after=15550000001');
    expect(rest.body).to.deep.equal({
      success: true,
      data: { labelId: '5', chats: ['15550000002'], next: null },
    });
    expect((await api('/labels/12/chats')).body).to.deep.equal({
      success: true,
      data: { labelId: '12', chats: [], next: null },
    });
  });

  it('When the input is bad, then 400 names the field; an unknown label is 404; no account linked is 409', async () => {
    await markConnected(t.redis, deviceId);
    const cases: [string, string[]][] = [
      ['/labels/abc/chats', ['labelId']],
      ['/labels/12345678901/chats', ['labelId']],
      ['/labels/5/chats?limit=0', ['limit']],
      ['/labels/5/chats?limit=1001', ['limit']],
      ['/labels/5/chats?limit=x', ['limit']],
      ['/labels/5/chats?after=' + 'x'.repeat(129), ['after']],
      ['/labels/5/chats?page=2', ['page']],
      ['/labels?limit=2', ['limit']],
    ];
    for (const [path, fields] of cases) {
      const res = await api(path);
      expect(res.status, path).to.equal(400);
      const details = res.body.details as { path: string[] }[];
      expect(
        details.map((d) => d.path[0]),
        path,
      ).to.deep.equal(fields);
    }
    const unknown = await api('/labels/77/chats');
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ success: false, error: LABEL_ERRORS.unknownLabel });
    const other = freshDeviceId();
    const otherToken = await createToken(t, { deviceId: other });
    const unlinked = await call(`${t.api}/labels`, { token: otherToken });
    expect(unlinked.status).to.equal(409);
    expect(unlinked.body).to.deep.equal({ success: false, error: ERRORS.noDevice });
  });

  it("When a token of one device asks, then it sees only its device's labels; a pool token is 403", async () => {
    await markConnected(t.redis, deviceId);
    await store.edit(deviceId, { id: '5', name: 'Mine', color: 0, deleted: false });
    const other = freshDeviceId();
    await markConnected(t.redis, other);
    await store.edit(other, { id: '6', name: 'Theirs', color: 0, deleted: false });
    const mine = await api('/labels');
    expect((mine.body.data as { labels: { name: string }[] }).labels.map((l) => l.name)).to.deep.equal([
      'Mine',
    ]);
    expect((await api('/labels/6/chats')).status, "another device's label").to.equal(404);
    const { value: poolToken } = await t.services.tokens.create({ name: 'pool', poolId: 'p-labels' });
    for (const path of ['/labels', '/labels/5/chats']) {
      const res = await call(`${t.api}${path}`, { token: poolToken });
      expect(res.status, path).to.equal(403);
      expect(res.body).to.deep.equal({ success: false, error: ERRORS.poolTokenNotAllowed });
    }
    expect((await api('/labels/5/chats', { method: 'POST', json: {} })).status).to.equal(405);
  });

  it('When GET /labels, a label’s chats and a chat’s labels are served (20 labels: WhatsApp Business’s most), then each costs no more Redis commands than GET /status', async () => {
    await markConnected(t.redis, deviceId);
    for (let i = 1; i <= 20; i++)
      await store.edit(deviceId, { id: String(i), name: `Label ${i}`, color: i % 20, deleted: false });
    for (let c = 0; c < 200; c++)
      await store.associate(deviceId, '1', `1555${String(c).padStart(7, '0')}`, true);
    const count = async (path: string) => {
      const seen: string[][] = [];
      const monitor = await RedisMonitor.start(t.config.redis.url, (args) => seen.push(args));
      const res = await api(path);
      expect(res.status, path).to.equal(200);
      await new Promise((r) => setTimeout(r, 200));
      monitor.close();
      // Only this request's commands: those naming this device's keys or its token.
      return seen.filter((a) => a.some((x) => x.includes(deviceId))).length;
    };
    const status = await count('/status');
    const labels = await count('/labels');
    const chats = await count('/labels/1/chats');
    const ofChat = await count('/chats/15550000007/labels');
    console.log(
      `      Redis commands on this device's keys: GET /status ${status}, GET /labels ${labels} (20 labels), GET /labels/1/chats ${chats} (200 chats), GET /chats/:chatId/labels ${ofChat}`,
    );
    expect(labels).to.be.at.most(status);
    expect(chats).to.be.at.most(status);
    expect(ofChat).to.be.at.most(status);
    const carried = (await api('/chats/15550000007/labels')).body as { data: { labels: { id: string }[] } };
    expect(carried.data.labels.map((l) => l.id)).to.deep.equal(['1']);
    expect(await t.redis.exists(keys.labels(deviceId))).to.equal(1);
  });
});
