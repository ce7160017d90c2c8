import { expect } from 'chai';
import { call, freshDeviceId, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';

describe('Admin API: tokens', () => {
  let t: TestApi;
  before(async () => {
    t = await startAdminApi();
  });
  after(() => t.close());

  it('When a token is created with a device and an expiry, then its value works once shown and is never listed', async () => {
    const admin = await signIn(t);
    const deviceId = freshDeviceId();
    const created = await admin.call('/tokens', {
      json: { name: 'shop backend', deviceId, expiresIn: '30d' },
    });
    expect(created.status).to.equal(201);
    expect(created.headers.get('cache-control')).to.equal('no-store');
    const value = String(created.body.value);
    expect(value).to.match(/^mgw_/);
    const token = created.body.token as Record<string, unknown>;
    expect(token).to.include({ name: 'shop backend', deviceId, expired: false });
    const days = (Date.parse(String(token.expiresAt)) - Date.parse(String(token.createdAt))) / 86_400_000;
    expect(days).to.equal(30);

    const status = await call(`${t.api}/status`, { token: value });
    expect(status.status).to.equal(200);

    const list = await admin.call('/tokens');
    const text = JSON.stringify(list.body);
    expect(text).not.to.include(value);
    const hash = await t.redis.hget('mgw:tokens', String(token.id));
    expect(text).not.to.include(String(hash));
    // As created, plus `lastUsedAt` once the /status call above has been recorded.
    const listed = (list.body.tokens as { id: string }[]).find((x) => x.id === token.id);
    expect(listed).to.deep.include(token);
  });

  it('When a token is revoked, then the public API answers 401 for it and the list no longer has it', async () => {
    const created = await adminCall(t, '/tokens', { json: { name: 'to revoke' } });
    const { id } = created.body.token as { id: string };
    const value = String(created.body.value);
    expect((await call(`${t.api}/status`, { token: value })).status).to.equal(200);
    const revoked = await adminCall(t, `/tokens/${id}`, { method: 'DELETE' });
    expect(revoked.status).to.equal(200);
    expect((await call(`${t.api}/status`, { token: value })).status).to.equal(401);
    const list = (await adminCall(t, '/tokens')).body.tokens as { id: string }[];
    expect(list.map((x) => x.id)).not.to.include(id);
    const again = await adminCall(t, `/tokens/${id}`, { method: 'DELETE' });
    expect(again.status).to.equal(404);
    expect(again.body).to.deep.equal({ success: false, error: 'Token not found' });
  });

  it('When the CLI rules are broken, then 400 names each field', async () => {
    const res = await adminCall(t, '/tokens', {
      json: { name: '', deviceId: 'Not A Slug', expiresIn: '30x', extra: 1 },
    });
    expect(res.status).to.equal(400);
    const paths = (res.body.details as { path: string[] }[]).map((d) => d.path.join('.'));
    expect(paths).to.have.members(['name', 'deviceId', 'expiresIn', 'extra']);
  });

  it('When the device is left empty, then the token acts on the default device', async () => {
    const res = await adminCall(t, '/tokens', { json: { name: 'default one', deviceId: '', expiresIn: '' } });
    expect(res.status).to.equal(201);
    expect(res.body.token).not.to.have.property('deviceId');
    expect(res.body.token).not.to.have.property('expiresAt');
  });
});
