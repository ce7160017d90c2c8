import { expect } from 'chai';
import { parseAllowedPrivateHosts } from '@mgw/common';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

describe('Admin API: a device webhook and list counts', () => {
  let t: TestApi;
  const deviceId = freshDeviceId();
  const url = 'http://127.0.0.1:9/hooks';

  before(async () => {
    t = await startAdminApi({ outbound: { allowList: parseAllowedPrivateHosts('127.0.0.1') } });
    await markConnected(t.redis, deviceId);
  });
  after(async () => {
    await t.close();
  });

  it('When the admin sets, rotates, reads and removes a device webhook, then the public API sees the same endpoint', async () => {
    expect((await adminCall(t, `/devices/${deviceId}/webhook`)).status).to.equal(404);
    const set = await adminCall(t, `/devices/${deviceId}/webhook`, {
      method: 'PUT',
      json: { url, events: ['message.sent'] },
    });
    expect(set.status).to.equal(200);
    const first = (set.body.data as { secret: string }).secret;
    expect(first).to.match(/^whsec_/);
    const rotated = await adminCall(t, `/devices/${deviceId}/webhook`, {
      method: 'PUT',
      json: { url, events: ['message.sent'], rotateSecret: true },
    });
    expect((rotated.body.data as { secret: string }).secret)
      .to.match(/^whsec_/)
      .and.not.equal(first);
    const token = await createToken(t, { deviceId });
    const mine = await call(`${t.api}/webhook`, { token });
    expect(mine.status).to.equal(200);
    expect(mine.body.data).to.deep.include({ url, events: ['message.sent'] });
    expect(mine.body.data).not.to.have.property('secret');
    const bad = await adminCall(t, `/devices/${deviceId}/webhook`, {
      method: 'PUT',
      json: { url: 'http://10.0.0.1/x' },
    });
    expect(bad.status).to.equal(400);
    const removed = await adminCall(t, `/devices/${deviceId}/webhook`, { method: 'DELETE' });
    expect(removed.body).to.deep.equal({ success: true, message: 'Webhook removed' });
    expect((await call(`${t.api}/webhook`, { token })).status).to.equal(404);
  });

  it("When a list is sent, then the device's recent messages carry the whole list's stored counts and its batch is readable", async () => {
    const token = await createToken(t, { deviceId });
    const sent = await call(`${t.api}/send`, {
      token,
      json: { to: ['15550002001', '15550002002', '15550002003'], text: 'hi' },
    });
    expect(sent.status).to.equal(202);
    const batchId = String(sent.body.messageId);
    const recent = await adminCall(t, `/devices/${deviceId}/messages?limit=1`);
    expect(recent.body.batches).to.deep.equal([
      {
        batchId,
        total: 3,
        counts: { scheduled: 0, queued: 3, sent: 0, delivered: 0, read: 0, failed: 0, deleted: 0, held: 0 },
      },
    ]);
    const batch = await adminCall(t, `/devices/${deviceId}/batches/${batchId}`);
    expect(batch.status).to.equal(200);
    expect(batch.body.batch).to.include({ batchId, total: 3 });
    const pub = await call(`${t.api}/batches/${batchId}`, { token });
    expect(pub.status).to.equal(200);
    expect((await adminCall(t, `/devices/${deviceId}/batches/nope`)).status).to.equal(404);
  });
});
