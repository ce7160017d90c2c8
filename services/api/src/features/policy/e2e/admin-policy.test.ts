import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { markRestricted } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

describe('Admin API and GET /status: a device sending policy, its usage and its pause', () => {
  let t: TestApi;
  const device = freshDeviceId();

  before(async () => {
    t = await startAdminApi();
    await markConnected(t.redis, device);
  });
  after(async () => {
    await t.redis.del(keys.deviceSettings(device), keys.deviceRestriction(device));
    await t.close();
  });

  it('When a policy is overridden, then the answer and GET /status show it, and null brings the default back', async () => {
    const put = await adminCall(t, `/devices/${device}/policy`, {
      method: 'PUT',
      json: { dailyCap: 250, firstContactCap: 3, quietHours: '22:00-07:00', timeZone: 'Europe/Berlin' },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.overrides).to.deep.equal({
      dailyCap: 250,
      firstContactCap: 3,
      quietHours: '22:00-07:00',
      timeZone: 'Europe/Berlin',
    });
    const token = await createToken(t, { deviceId: device });
    const status = await call(`${t.url}/api/messenger/v1/status`, { token });
    expect(status.status).to.equal(200);
    expect(status.body.status).to.equal('connected');
    expect(status.body.sending).to.include({
      sentToday: 0,
      firstContactsToday: 0,
      dailyCap: 250,
      firstContactCap: 3,
      quietHours: '22:00-07:00',
      timeZone: 'Europe/Berlin',
    });
    const back = await adminCall(t, `/devices/${device}/policy`, {
      method: 'PUT',
      json: { dailyCap: null, quietHours: null, timeZone: null, firstContactCap: null },
    });
    expect(back.body.overrides).to.deep.equal({});
    expect((back.body.sending as Record<string, unknown>).timeZone).to.equal(
      t.services.config.sendPolicy.defaults.timeZone,
    );
  });

  it('When typing is turned off and back, then the override is a boolean stored where the sender reads it', async () => {
    const off = await adminCall(t, `/devices/${device}/policy`, { method: 'PUT', json: { typing: false } });
    expect(off.status, JSON.stringify(off.body)).to.equal(200);
    expect(off.body.overrides).to.deep.equal({ typing: false });
    expect(await t.redis.hget(keys.deviceSettings(device), 'typing')).to.equal('false');
    const bad = await adminCall(t, `/devices/${device}/policy`, { method: 'PUT', json: { typing: 'maybe' } });
    expect(bad.status).to.equal(400);
    const back = await adminCall(t, `/devices/${device}/policy`, { method: 'PUT', json: { typing: null } });
    expect(back.body.overrides).to.deep.equal({});
  });

  it('When an override is not valid, then 400 with details and nothing changes', async () => {
    const res = await adminCall(t, `/devices/${device}/policy`, {
      method: 'PUT',
      json: { otpReserve: 2, timeZone: 'Nowhere/Atlantis', quietHours: '9-5' },
    });
    expect(res.status).to.equal(400);
    expect(res.body.success).to.equal(false);
    expect((res.body.details as unknown[]).length).to.be.at.least(1);
    const get = await adminCall(t, `/devices/${device}/policy`);
    expect(get.body.overrides).to.deep.equal({});
  });

  it('When the device is paused, then /status shows the restriction and pausedUntil, and the admin API can end it', async () => {
    const until = Date.now() + 60_000;
    await markRestricted(t.redis, device, 'reachout_timelock', until);
    const token = await createToken(t, { deviceId: device });
    const status = await call(`${t.url}/api/messenger/v1/status`, { token });
    const sending = status.body.sending as Record<string, unknown>;
    expect(sending.restriction).to.deep.include({
      reason: 'reachout_timelock',
      until: new Date(until).toISOString(),
    });
    expect(sending.pausedUntil).to.equal(new Date(until).toISOString());
    const cleared = await adminCall(t, `/devices/${device}/restriction`, { method: 'DELETE' });
    expect(cleared.status).to.equal(200);
    expect(cleared.body.cleared).to.equal(true);
    expect((cleared.body.sending as Record<string, unknown>).restriction).to.equal(undefined);
  });
});
