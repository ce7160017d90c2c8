import { expect } from 'chai';
import { openSendQueue } from '@mgw/store';
import { useStack, waitFor } from '@mgw/testing';

const DEVICES = 20;
/** The sender's bound in this stack: 2 socket opens a second, 1 at once (the host's is higher). */
const RATE = 2;
const BURST = 1;

/** The most logins found in any window of `windowMs` starting at a login. */
function peakIn(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowMs) j++;
    peak = Math.max(peak, j - i);
  }
  return peak;
}

/**
 * A restart without a storm: a sender holding 20 linked devices is restarted with a low connect
 * rate; the simulator sees the devices log in no faster than the bound, the device with a queued
 * OTP first (its OTP delivered while idle devices still wait), then the one with a queued message.
 */
describe('e2e: a restarted sender reconnects its devices at the connect rate, an OTP device first (real services, simulator)', function () {
  this.timeout(300_000);
  const stack = useStack(
    {
      senders: 1,
      env: {
        CONNECT_RATE_PER_SENDER: String(RATE),
        CONNECT_BURST_PER_SENDER: String(BURST),
        CONNECT_RATE_PER_HOST: '3',
        CONNECT_BURST_PER_HOST: '3',
        LEASE_SCAN_MS: '500',
        // The OTP is accepted while no sender runs: it must still be worth sending after the restart.
        OTP_WAIT_TIMEOUT_MS: '90000',
      },
    },
    80,
  );
  const phones = Array.from({ length: DEVICES }, (_, i) => `1555077${String(i).padStart(4, '0')}`);
  const tokens: string[] = [];
  const deviceIds: string[] = [];
  /**
   * Logins of linked devices the simulator saw: the phone, and when its socket opened (what the
   * connect rate bounds; the handshake's end adds the round trips of two loaded processes, whose
   * spread once put 4 handshakes in 918 ms, though the gate admits one each 500 ms at most).
   */
  const logins: { phone: string; at: number }[] = [];

  before(async () => {
    for (let i = 0; i < DEVICES; i++) {
      deviceIds.push(`e2e-restart-${i}-${Math.random().toString(36).slice(2, 6)}`);
      tokens.push(await stack().createToken(deviceIds[i]!));
      await stack().linkByQr(phones[i]!, `Restart ${i}`, tokens[i]);
    }
    const sim = stack().sim.simulator;
    const onHandshake = sim.onHandshake.bind(sim);
    sim.onHandshake = (conn, handshake) => {
      onHandshake(conn, handshake);
      if (!handshake.payload.devicePairingData && conn.account)
        logins.push({ phone: conn.account.phone, at: conn.openedAt });
    };
  });

  it('When the sender restarts with 20 devices, then they log in no faster than the connect rate, the OTP device first and its OTP delivered before the idle ones are all back', async () => {
    const [old] = stack().senders();
    old!.child.kill('SIGTERM');
    await old!.exited;
    const otpDevice = 13;
    const queuedDevice = 7;
    // While no sender runs: an OTP for one device (the API waits for it), a message for another.
    const otp = stack().api<{ success: boolean }>(
      'POST',
      '/otp',
      { phone: '15550779001', code: '424242', language: 'English' },
      tokens[otpDevice],
    );
    const otpAnsweredAt = otp.then(() => Date.now());
    const queued = await stack().api(
      'POST',
      '/send',
      { to: ['15550779002'], text: 'queued' },
      tokens[queuedDevice],
    );
    expect(queued.status, JSON.stringify(queued.body)).to.equal(202);
    // The OTP's job is in its device's queue before the sender starts (its request is still open).
    const otpQueue = openSendQueue(stack().redis, deviceIds[otpDevice]!);
    try {
      await waitFor(async () => (await otpQueue.count()) >= 1, { intervalMs: 50, what: 'the OTP queued' });
    } finally {
      await otpQueue.close();
    }
    logins.length = 0;
    const proc = await stack().startService('sender');

    await waitFor(async () => new Set(logins.map((l) => l.phone)).size === DEVICES, {
      timeoutMs: 90_000,
      intervalMs: 100,
      what: 'every device logged in again',
    });
    logins.sort((a, b) => a.at - b.at);
    const order = logins.map((l) => phones.indexOf(l.phone));
    expect(order[0], `login order ${order.join(',')}`).to.equal(otpDevice);
    expect(order[1], `login order ${order.join(',')}`).to.equal(queuedDevice);
    // 2 a second and 1 at once: never 4 in a second, and 20 take ~9.5 s.
    const times = logins.map((l) => l.at);
    expect(peakIn(times, 1000), `login times ${times.map((t) => t - times[0]!).join(',')}`).to.be.at.most(
      RATE + BURST,
    );
    expect(Math.max(...times) - Math.min(...times)).to.be.at.least(
      ((DEVICES - BURST - 1) / RATE) * 1000 * 0.9,
    );

    const answer = await otp;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(await otpAnsweredAt).to.be.below(Math.max(...times));
    expect((await stack().inbox('15550779001')).length).to.equal(1);
    await waitFor(async () => (await stack().inbox('15550779002')).length === 1, {
      what: 'queued message delivered',
    });

    const metrics = await (await fetch(`http://127.0.0.1:${proc.metricsPort}/metrics`)).text();
    expect(metrics).to.match(/^mgw_connect_admitted_total\{priority="otp"\} 1$/m);
    expect(metrics).to.match(/^mgw_connect_admitted_total\{priority="queued"\} 1$/m);
    expect(metrics).to.match(/^mgw_connect_admitted_total\{priority="idle"\} 18$/m);
    expect(metrics).to.match(/^mgw_connect_admissions_waiting 0$/m);
  });
});
