import { expect } from 'chai';
import { ERRORS, LABEL_ERRORS, keys, newPlatformMessageId } from '@mgw/contracts';
import { LabelStore, ChatIndex, MUTED_ALWAYS } from '@mgw/store';
import { RedisMonitor, waitFor } from '@mgw/testing';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
  createPoolToken,
} from '../../../../test/helpers/api.js';
import { signIn, startAdminApi, type AdminSessionClient } from '../../../../test/helpers/admin.js';

/**
 * The label capability's route tests, public and admin, each against the real app and Redis:
 * - the public label reads (GET /labels, GET /labels/:labelId/chats);
 * - the admin label routes and the admin chat list's pin, archive, mute and labels.
 */

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
    const poolToken = await createPoolToken(t, 'p-labels');
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
      // Every command of the request is seen once one sent after it is: MONITOR shows them in the
      // order Redis ran them (a sleep could end before a loaded host's monitor caught up).
      const marker = `monitor-marker-${Math.random().toString(36).slice(2)}`;
      await t.redis.echo(marker);
      await waitFor(() => seen.some((a) => a.includes(marker)), { intervalMs: 10, what: 'the marker seen' });
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

const paths = (body: Record<string, unknown>) =>
  ((body.details ?? []) as { path: (string | number)[] }[]).map((d) => d.path.join('.'));

/**
 * The admin label routes (the dashboard's Labels tab) and the chat list's state (the Chats page),
 * against the real app and Redis: the labels and chat states are written as the device's holder
 * writes them (LabelStore from app-state label notices, ChatIndex.setState from `chats.update`);
 * the way through the real client and the simulator is libs/console/src/chats/e2e/chat-actions.test.ts.
 */
describe('Admin API: a device’s labels and its chats’ pin, archive, mute and labels, as the public label routes', () => {
  let t: TestApi;
  let admin: AdminSessionClient;
  let store: LabelStore;
  let chats: ChatIndex;

  before(async () => {
    t = await startAdminApi({ rateLimits: { groups: 1000 } });
    admin = await signIn(t);
    store = new LabelStore(t.redis, t.services.encryption);
    chats = new ChatIndex(t.redis, t.services.encryption);
  });
  after(() => t.close());

  const publicGet = async (deviceId: string, path: string) =>
    call(`${t.api}${path}`, { token: await createToken(t, { deviceId }) });
  const write = (deviceId: string, from: string, text: string) =>
    t.services.inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      from,
      contact: { phone: from },
      text,
      receivedAt: new Date(),
      waKey: { remoteJid: `${from}@s.whatsapp.net` },
    });

  it('When the device learned labels, then the admin reads answer as the public GET /labels and a label’s chats', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    await store.edit(deviceId, { id: '5', name: 'VIP', color: 3, deleted: false });
    await store.edit(deviceId, { id: '7', name: 'عميل جديد', color: 12, deleted: false });
    for (const chat of ['15552700002', '15552700001']) await store.associate(deviceId, '5', chat, true);

    const list = await admin.call(`/devices/${deviceId}/labels`);
    expect(list.status).to.equal(200);
    expect(list.body).to.deep.equal((await publicGet(deviceId, '/labels')).body);
    expect(list.body).to.deep.equal({
      success: true,
      data: {
        total: 2,
        labels: [
          { id: '5', name: 'VIP', color: 3, chats: 2 },
          { id: '7', name: 'عميل جديد', color: 12, chats: 0 },
        ],
      },
    });
    const page = await admin.call(`/devices/${deviceId}/labels/5/chats?limit=1`);
    expect(page.body).to.deep.equal((await publicGet(deviceId, '/labels/5/chats?limit=1')).body);
    expect(page.body).to.deep.equal({
      success: true,
      data: { labelId: '5', chats: ['15552700001'], next: '15552700001' },
    });
    const ofChat = await admin.call(`/devices/${deviceId}/chats/15552700002/labels`);
    expect(ofChat.body).to.deep.equal({
      success: true,
      data: { chatId: '15552700002', labels: [{ id: '5', name: 'VIP', color: 3 }] },
    });
  });

  it('When the chats have a pin, an archive, a mute and labels, then the admin chat list shows them (the public GET /chats does not)', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    const [ana, ben, cy] = ['15552700011', '15552700012', '15552700013'];
    await write(deviceId, ana, 'Hi from Ana');
    await write(deviceId, ben, 'Hi from Ben');
    await write(deviceId, cy, 'Hi from Cy');
    const inAnHour = new Date(Date.now() + 3600_000);
    expect(await chats.setState(deviceId, ana, { pinned: true, mutedUntil: inAnHour })).to.equal(true);
    expect(await chats.setState(deviceId, ben, { archived: true })).to.equal(true);
    // A mute with no end (WhatsApp's "Always": a negative end time), and one already over.
    expect(await chats.setState(deviceId, cy, { mutedUntil: new Date(-1) })).to.equal(true);
    await store.edit(deviceId, { id: '3', name: 'Paid', color: 5, deleted: false });
    await store.edit(deviceId, { id: '9', name: 'Follow up', color: 1, deleted: false });
    await store.associate(deviceId, '9', ana, true);
    await store.associate(deviceId, '3', ana, true);
    await store.associate(deviceId, '3', ben, true);

    const stateOf = async () => {
      const res = await admin.call(`/devices/${deviceId}/chats?limit=10`);
      expect(res.status).to.equal(200);
      const list = res.body.chats as Record<string, unknown>[];
      return Object.fromEntries(
        list.map((c) => [c.id, [c.pinned, c.archived, c.mutedUntil, c.labels]] as const),
      );
    };
    expect(await stateOf()).to.deep.equal({
      [ana]: [true, false, inAnHour.toISOString(), ['3', '9']],
      [ben]: [false, true, null, ['3']],
      [cy]: [false, false, MUTED_ALWAYS, []],
    });

    // Undone (as an unpin, an unarchive, an unmute arrive), and a label taken off.
    await chats.setState(deviceId, ana, { pinned: false, mutedUntil: null });
    await chats.setState(deviceId, ben, { archived: false });
    await chats.setState(deviceId, cy, { mutedUntil: new Date(Date.now() - 1000) });
    await store.associate(deviceId, '3', ana, false);
    expect(await stateOf()).to.deep.equal({
      [ana]: [false, false, null, ['9']],
      [ben]: [false, false, null, ['3']],
      [cy]: [false, false, null, []],
    });

    // The public GET /chats keeps its shape.
    const pub = await publicGet(deviceId, '/chats');
    const first = (pub.body.data as { chats: Record<string, unknown>[] }).chats[0]!;
    for (const field of ['pinned', 'archived', 'mutedUntil', 'labels'])
      expect(first, field).to.not.have.property(field);
  });

  it('When a chat has no record, then its state is not kept (no key is made for it)', async () => {
    const deviceId = freshDeviceId();
    expect(await chats.setState(deviceId, '15552700099', { pinned: true })).to.equal(false);
    expect(await t.redis.exists(keys.chat(deviceId, '15552700099'))).to.equal(0);
  });

  it('When the input is bad, then 400 names the field; an unknown label is 404; no account linked is 409, as the public routes answer', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    const cases: [string, string, unknown, string[]][] = [
      ['POST', `/devices/${deviceId}/labels`, {}, ['name']],
      ['POST', `/devices/${deviceId}/labels`, { name: 'x'.repeat(101) }, ['name']],
      ['POST', `/devices/${deviceId}/labels`, { name: 'VIP', color: 20 }, ['color']],
      ['PATCH', `/devices/${deviceId}/labels/abc`, { name: 'VIP' }, ['labelId']],
      ['PATCH', `/devices/${deviceId}/chats/15552700011`, {}, []],
      ['PATCH', `/devices/${deviceId}/chats/15552700011`, { muted: true, muteSeconds: 10 }, ['muteSeconds']],
      ['PATCH', `/devices/${deviceId}/chats/abc`, { pinned: true }, ['chatId']],
      ['POST', `/devices/${deviceId}/chats/15552700011/labels`, { labelId: 'x' }, ['labelId']],
      ['GET', `/devices/${deviceId}/labels/5/chats?limit=0`, undefined, ['limit']],
      ['GET', `/devices/Bad Id/labels`, undefined, ['deviceId']],
    ];
    for (const [method, path, json, fields] of cases) {
      const res = await admin.call(path.replace(' ', '%20'), { method, json });
      const what = `${method} ${path} ${JSON.stringify(json)}`;
      expect(res.status, what).to.equal(400);
      expect(res.body.success, what).to.equal(false);
      if (fields.length) expect(paths(res.body), what).to.deep.equal(fields);
    }
    const unknown = await admin.call(`/devices/${deviceId}/labels/42`, {
      method: 'PATCH',
      json: { name: 'x' },
    });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ success: false, error: LABEL_ERRORS.unknownLabel });
    expect((await admin.call(`/devices/${deviceId}/labels/42/chats`)).status).to.equal(404);

    const unlinked = freshDeviceId();
    for (const [method, path, json] of [
      ['GET', `/devices/${unlinked}/labels`, undefined],
      ['POST', `/devices/${unlinked}/labels`, { name: 'VIP' }],
      ['PATCH', `/devices/${unlinked}/chats/15552700011`, { pinned: true }],
      ['POST', `/devices/${unlinked}/chats/15552700011/labels`, { labelId: '5' }],
    ] as const) {
      const res = await admin.call(path, { method, json });
      expect(res.status, `${method} ${path}`).to.equal(409);
      expect(res.body, `${method} ${path}`).to.deep.equal({ success: false, error: ERRORS.noDevice });
    }
    // A body on a DELETE is refused, as every admin route's.
    const withBody = await admin.call(`/devices/${deviceId}/labels/5`, { method: 'DELETE', json: { x: 1 } });
    expect(withBody.status).to.equal(400);
  });

  it('When there is no session, or no CSRF token, then 401 or 403 as every admin change', async () => {
    const deviceId = freshDeviceId();
    const anonymous = await call(`${t.url}/api/admin/v1/devices/${deviceId}/labels`);
    expect(anonymous.status).to.equal(401);
    for (const [method, path] of [
      ['POST', `/devices/${deviceId}/labels`],
      ['PATCH', `/devices/${deviceId}/chats/15552700011`],
      ['DELETE', `/devices/${deviceId}/chats/15552700011/labels/5`],
    ] as const) {
      const res = await admin.call(path, {
        method,
        json: method === 'DELETE' ? undefined : { name: 'x', pinned: true },
        csrf: false,
      });
      expect(res.status, `${method} ${path}`).to.equal(403);
    }
  });
});
