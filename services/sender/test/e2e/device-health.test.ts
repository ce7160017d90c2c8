import { expect } from 'chai';
import { healthCounts } from '@mgw/store';
import { deliverNctSalt, useStack, waitFor } from '@mgw/testing';

interface Health {
  score: number;
  reasons: { code: string; penalty: number; message: string }[];
}

const ADMIN_TOKEN = 'device-health-admin-token-0123456789';

describe("e2e: a device's health score falls with WhatsApp's push-back, with its reasons, in /status, the admin API and the gauge (real services, simulator)", function () {
  this.timeout(120_000);
  const stack = useStack({
    env: { SEND_RESTRICTION_BACKOFF_MS: '12000', ADMIN_API_TOKEN: ADMIN_TOKEN },
  });
  const account = '15550780001';

  before(async () => {
    await stack().linkByQr(account);
    // With the account's NCT salt, first contacts carry a cstoken: a 463 is then about the account
    // (without it, one that WhatsApp says is not capping fails first_contact_token_missing instead).
    await deliverNctSalt(stack(), account);
  });
  afterEach(async () => {
    await stack().simApi('DELETE', '/faults');
  });

  async function statusHealth(): Promise<Health> {
    const res = await stack().api<{ sending: { health: Health } }>('GET', '/status');
    expect(res.status).to.equal(200);
    return res.body.sending.health;
  }
  async function admin<T>(path: string): Promise<T> {
    const res = await stack().adminApi<T>(ADMIN_TOKEN, 'GET', path);
    expect(res.status).to.equal(200);
    return res.body;
  }
  /** The sender's `mgw_device_health_score` of the device, from its /metrics (a scrape). */
  async function gauge(): Promise<number> {
    const sender = stack().processes.find((p) => p.name.startsWith('sender'))!;
    const text = await (await fetch(`http://127.0.0.1:${sender.metricsPort}/metrics`)).text();
    const m = new RegExp(`^mgw_device_health_score\\{device="${stack().deviceId}"\\} (\\S+)$`, 'm').exec(
      text,
    );
    return m ? Number(m[1]) : NaN;
  }
  const codes = (h: Health) => h.reasons.map((r) => r.code);

  it('When the account is fresh, then it scores 100 with no reasons everywhere', async () => {
    expect(await statusHealth()).to.deep.equal({ score: 100, reasons: [] });
    const shown = await admin<{ device: { health: Health } }>(`/devices/${stack().deviceId}`);
    expect(shown.device.health).to.deep.equal({ score: 100, reasons: [] });
    await waitFor(async () => (await gauge()) === 100, { timeoutMs: 40_000, what: 'gauge at 100' });
  });

  it('When WhatsApp acks a message with 463, then the score drops for the cap in force and the refusal, and recovers to the refusal alone when the pause ends', async () => {
    const to = '15550780101';
    await stack().simApi('POST', '/faults/ack-error', { to, error: 463, count: 1 });
    const sent = await stack().api<{ messageId: string }>('POST', '/send', { to, text: 'hello' });
    expect(sent.status).to.equal(202);

    await waitFor(async () => codes(await statusHealth()).includes('capped'), { what: 'capped in /status' });
    const capped = await statusHealth();
    expect(capped.score).to.equal(50);
    expect(capped.reasons).to.deep.equal([
      {
        code: 'capped',
        penalty: 40,
        message: 'capped: WhatsApp refuses new chats (new-chat cap or restricted account)',
      },
      { code: 'refusals_463', penalty: 10, message: '1 refusal (ack 463) in the last 24 h' },
    ]);
    // The admin API shows the same, in the device and in the list.
    const shown = await admin<{ device: { health: Health } }>(`/devices/${stack().deviceId}`);
    expect(shown.device.health).to.deep.equal(capped);
    const list = await admin<{ devices: { deviceId: string; health?: Health }[] }>('/devices');
    expect(list.devices.find((d) => d.deviceId === stack().deviceId)!.health).to.deep.equal(capped);
    // The sender refreshes a device's gauges within 5 s of a pause starting or ending (every 15 s otherwise).
    await waitFor(async () => (await gauge()) === 50, { timeoutMs: 40_000, what: 'gauge at 50' });

    // The pause ends by itself (the back-off); the refusal stays counted in the window.
    await waitFor(async () => !codes(await statusHealth()).includes('capped'), {
      timeoutMs: 30_000,
      what: 'the pause over',
    });
    expect(await statusHealth()).to.deep.include({ score: 90 });
    expect(codes(await statusHealth())).to.deep.equal(['refusals_463']);
    await waitFor(async () => (await gauge()) === 90, { timeoutMs: 40_000, what: 'gauge at 90' });
  });

  it('When WhatsApp time-locks the account, then the lock is the costliest reason until it ends', async () => {
    await stack().simApi('POST', '/faults/restrict', { phone: account, durationMs: 4000 });
    await waitFor(async () => codes(await statusHealth()).includes('reachout_timelock'), {
      what: 'time lock in /status',
    });
    const locked = await statusHealth();
    expect(locked.reasons[0]).to.deep.equal({
      code: 'reachout_timelock',
      penalty: 50,
      message: 'reach-out time lock in force',
    });
    expect(locked.score).to.equal(40);
    const shown = await admin<{ device: { health: Health } }>(`/devices/${stack().deviceId}`);
    expect(shown.device.health.reasons[0]!.code).to.equal('reachout_timelock');
    await waitFor(async () => !codes(await statusHealth()).includes('reachout_timelock'), {
      timeoutMs: 20_000,
      what: 'the lock over',
    });
    expect((await statusHealth()).score).to.equal(90);
  });

  it('When the connection drops again and again, then the reconnects past the free two cost points', async () => {
    const reconnects = async () => (await healthCounts(stack().redis, stack().deviceId)).reconnects;
    for (let i = 1; i <= 3; i++) {
      // "connected" in /status can come a moment before the simulator holds the new socket: a drop
      // then finds none to drop, and is made again.
      await waitFor(
        async () =>
          (await stack().simApi<{ dropped: number }>('POST', '/faults/drop', { phone: account })).dropped > 0,
        { timeoutMs: 20_000, intervalMs: 200, what: `drop ${i} to find the socket` },
      );
      await waitFor(async () => (await reconnects()) >= i, { timeoutMs: 30_000, what: `reconnect ${i}` });
      await waitFor(
        async () => (await stack().api<{ status: string }>('GET', '/status')).body.status === 'connected',
        { timeoutMs: 20_000, what: `connected after drop ${i}` },
      );
    }
    const health = await statusHealth();
    const reason = health.reasons.find((r) => r.code === 'reconnects');
    expect(reason, JSON.stringify(health)).to.not.equal(undefined);
    const count = Number(/^(\d+) reconnects/.exec(reason!.message)![1]);
    expect(count).to.be.at.least(3);
    expect(reason!.penalty).to.equal(Math.min(15, (count - 2) * 3));
    expect(health.score).to.equal(90 - reason!.penalty);
  });

  it('When the phone logs the account out, then the logout is counted and shows once the device is linked again', async () => {
    const before = await statusHealth();
    await stack().simApi('POST', '/phone/unlink', { phone: account });
    await stack().waitForStatus('disconnected', 10_000);
    await waitFor(async () => (await healthCounts(stack().redis, stack().deviceId)).logouts === 1, {
      what: 'logout counted',
    });
    await stack().linkByQr(account);
    const health = await statusHealth();
    expect(health.reasons.find((r) => r.code === 'logouts')).to.deep.equal({
      code: 'logouts',
      penalty: 30,
      message: '1 logout in the last 24 h',
    });
    expect(health.score).to.equal(Math.max(0, before.score - 30));
    const shown = await admin<{ device: { health: Health } }>(`/devices/${stack().deviceId}`);
    expect(shown.device.health).to.deep.equal(health);
  });
});
