import { expect } from 'chai';
import { SANDBOX_NUMBER } from '@mgw/cloud-sim';
import { markRestricted, clearRestriction } from '@mgw/store';
import { useStack, waitFor } from '@mgw/testing';

/**
 * Issue 83 item 5: an OTP to a pool's linked device that WhatsApp pauses falls back to the pool's
 * Cloud API device (opted in per pool), through the real services and both simulators: the linked
 * device linked as a phone links, the cloud device configured and connected by its own token, the
 * pause written as the sender writes one (the store's markRestricted).
 */
describe('e2e: an OTP falls back from a paused linked device to its pool’s Cloud API device (real services, both simulators)', function () {
  this.timeout(180_000);
  const ADMIN = 'otp-fallback-e2e-admin-token-0123456789ab';
  const stack = useStack({ cloud: true, env: { ADMIN_API_TOKEN: ADMIN, OTP_WAIT_TIMEOUT_MS: '20000' } }, 120);
  const suffix = Math.random().toString(36).slice(2, 7);
  const cloudId = `otp-cloud-${suffix}`;
  const poolId = `otp-pool-${suffix}`;

  before(async () => {
    await stack().fastLink('15550960001');
    const cloudToken = await stack().createToken(cloudId);
    await stack().configureSandboxCloud(cloudToken);
    expect((await stack().api('POST', '/connect', undefined, cloudToken)).body).to.deep.include({
      status: 'connected',
    });
    const created = await stack().adminApi(ADMIN, 'POST', '/pools', {
      id: poolId,
      name: 'OTP fallback',
      devices: [stack().deviceId, cloudId],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
  });

  const otp = (phone: string) =>
    stack().api<{ data: Record<string, string> }>('POST', '/otp', { phone, code: '482913' });

  it('When the pool has not opted in, then a paused device’s OTP is not sent by the cloud device', async () => {
    await markRestricted(stack().redis, stack().deviceId, 'reachout_timelock', Date.now() + 3000);
    const before = stack().cloud.sent(SANDBOX_NUMBER.id).length;
    const res = await otp('15550960002');
    // Held by the pause, then sent by the linked device once it ended (or not in time): never by the cloud one.
    expect(res.body.data?.engine, JSON.stringify(res.body)).to.equal(undefined);
    expect(stack().cloud.sent(SANDBOX_NUMBER.id)).to.have.length(before);
  });

  it('When the pool opted in and the linked device is paused, then the cloud device sends the OTP as its authentication template, and the answer says so', async () => {
    const patched = await stack().adminApi(ADMIN, 'PATCH', `/pools/${poolId}`, { otpFallback: true });
    expect(patched.body, JSON.stringify(patched.body)).to.deep.include({ success: true });
    await markRestricted(stack().redis, stack().deviceId, 'reachout_timelock', Date.now() + 60_000);
    const res = await otp('15550960003');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.deep.include({
      phone: '15550960003',
      code: '482913',
      deviceId: cloudId,
      engine: 'cloud',
    });
    const sent = stack()
      .cloud.sent(SANDBOX_NUMBER.id)
      .filter((m) => m.waId === '15550960003');
    expect(sent.map((m) => m.type)).to.deep.equal(['template']);
    expect(res.body.data!.platformMessageId).to.equal(sent[0]!.id);
    expect(JSON.stringify(sent[0]!.request)).to.contain('482913');
    // Nothing reached the contact through the paused account.
    expect(await stack().inbox('15550960003')).to.deep.equal([]);

    // Its record says which engine sent it, read with the linked device's own token (where it was
    // asked) and the cloud device's (where it lives) alike.
    const cloudToken = await stack().createToken(cloudId);
    for (const token of [undefined, cloudToken]) {
      const record = await stack().api<{ data: Record<string, unknown> }>(
        'GET',
        `/messages/${res.body.data!.messageId}`,
        undefined,
        token,
      );
      expect(record.status, JSON.stringify(record.body)).to.equal(200);
      expect(record.body.data).to.deep.include({
        deviceId: cloudId,
        kind: 'otp',
        engine: 'cloud',
        platformMessageId: sent[0]!.id,
      });
    }
  });

  it('When the pause is over, then the linked device sends its own OTP again', async () => {
    await clearRestriction(stack().redis, stack().deviceId);
    const res = await otp('15550960004');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data?.engine).to.equal(undefined);
    await waitFor(async () => (await stack().inbox('15550960004')).length === 1, { what: 'the linked copy' });
    const record = await stack().api<{ data: Record<string, unknown> }>(
      'GET',
      `/messages/${res.body.data!.messageId}`,
    );
    expect(record.body.data).to.deep.include({ deviceId: stack().deviceId, engine: 'linked' });
    expect(
      stack()
        .cloud.sent(SANDBOX_NUMBER.id)
        .filter((m) => m.waId === '15550960004'),
    ).to.deep.equal([]);
  });
});
