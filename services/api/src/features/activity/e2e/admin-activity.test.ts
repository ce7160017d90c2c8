import { expect } from 'chai';
import { newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import { MessageStore } from '@mgw/store';
import { call, freshDeviceId, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi } from '../../../../test/helpers/admin.js';

const HOUR = 3_600_000;

describe("Admin API: a device's sending activity per hour", () => {
  let t: TestApi;
  const deviceId = freshDeviceId();
  before(async () => {
    t = await startAdminApi();
  });
  after(async () => {
    await t.close();
  });

  const job = (): SendJobData => ({
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to: '15550002001',
    contentId: newMessageId(),
    linkGeneration: 0,
    enqueuedAt: Date.now(),
  });

  it('When messages of the device were sent, read and failed, then the signed-in page reads 24 hours, oldest first, with them in their hours', async () => {
    const messages = new MessageStore(t.redis, 60);
    const now = Date.now();
    const [a, b, c] = [job(), job(), job()];
    for (const j of [a, b]) {
      await messages.claim(j);
      await messages.markSent(j, new Date(now - 3 * HOUR));
    }
    await messages.markReceipt(deviceId, a.messageId, 'read', new Date(now));
    await messages.markFailed(c, 'not_on_whatsapp', new Date(now));

    const session = await signIn(t);
    const res = await session.call(`/devices/${deviceId}/activity`);
    expect(res.status).to.equal(200);
    const hours = res.body.hours as {
      hour: string;
      sent: number;
      delivered: number;
      read: number;
      failed: number;
    }[];
    expect(hours).to.have.length(24);
    // By hour start, not by position: the test holds if the hour turns between here and the server.
    const hourOf = (ms: number) => new Date(Math.floor(ms / HOUR) * HOUR).toISOString();
    const at = (ms: number) => hours.find((h) => h.hour === hourOf(ms));
    expect(hours[23]!.hour).to.be.oneOf([hourOf(now), hourOf(now + HOUR)]);
    const steps = hours.slice(1).map((h, i) => Date.parse(h.hour) - Date.parse(hours[i]!.hour));
    expect(new Set(steps)).to.deep.equal(new Set([HOUR]));
    expect(at(now - 3 * HOUR)).to.include({ sent: 2, delivered: 0, read: 0, failed: 0 });
    expect(at(now)).to.include({ sent: 0, delivered: 1, read: 1, failed: 1 });
    expect(res.body).to.deep.include({ deviceId, totals: { sent: 2, delivered: 1, read: 1, failed: 1 } });

    const shorter = await adminCall(t, `/devices/${deviceId}/activity?hours=2`);
    expect(shorter.status).to.equal(200);
    expect((shorter.body.hours as unknown[]).length).to.equal(2);
    expect(shorter.body.totals).to.deep.equal({ sent: 0, delivered: 1, read: 1, failed: 1 });
  });

  it('When the hours or the device id are not valid, then 400 with details; without a session, 401', async () => {
    for (const q of ['hours=0', 'hours=49', 'hours=abc', 'days=1']) {
      const res = await adminCall(t, `/devices/${deviceId}/activity?${q}`);
      expect(res.status, q).to.equal(400);
      expect(res.body).to.include({ success: false, error: 'Invalid request data' });
      expect(res.body.details, q).to.be.an('array').that.is.not.empty;
    }
    const badId = await adminCall(t, '/devices/Not%20A%20Device/activity');
    expect(badId.status).to.equal(400);
    const stranger = await call(`${t.url}/api/admin/v1/devices/${deviceId}/activity`);
    expect(stranger.status).to.equal(401);
  });
});
