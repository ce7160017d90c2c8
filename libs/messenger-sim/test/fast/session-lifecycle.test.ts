import { expect } from 'chai';
import { DisconnectReason } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { sleep, TestDevice, until, linkTestDevice, startTestSimulator } from '@mgw/testing';

describe('messenger-sim: device session lifecycle', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  const devices: TestDevice[] = [];

  before(async () => {
    sim = await startTestSimulator();
  });

  after(async () => {
    await Promise.all(devices.map((d) => d.end()));
    await sim.close();
  });

  it('When the phone enters the pairing code the device shows, then the device links and opens', async () => {
    const device = new TestDevice(sim.info);
    devices.push(device);
    device.connect();
    await device.nextQr();
    const code = await device.sock!.requestPairingCode('15550002001');
    const opened = device.waitForOpen(20_000);

    const linked = await sim.linkWithPairingCode({
      pairingCode: code,
      phone: '15550002001',
      name: 'Code Account',
    });
    await opened;

    expect(linked.jid).to.equal(`15550002001:${linked.deviceId}@s.whatsapp.net`);
    expect(device.auth.creds.me?.id).to.equal(linked.jid);
    expect(device.auth.creds.registered).to.equal(true);
    expect(device.closes.map((c) => c.statusCode)).to.deep.equal([DisconnectReason.restartRequired]);
  });

  it('When the phone enters a wrong pairing code, then linking is refused and no device is added', async () => {
    const device = new TestDevice(sim.info);
    devices.push(device);
    device.connect();
    await device.nextQr();
    await device.sock!.requestPairingCode('15550002002');

    const error = await sim.linkWithPairingCode({ pairingCode: 'ZZZZZZZZ', phone: '15550002002' }).then(
      () => undefined,
      (err: Error & { status?: number }) => err,
    );

    expect(error?.status).to.equal(400);
    expect(sim.devices('15550002002')).to.deep.equal([]);
  });

  it('When a linked device reconnects with its saved credentials, then it opens without pairing again', async () => {
    const device = await linkTestDevice(sim, '15550002003');
    devices.push(device);
    await device.end();

    device.connect();
    await device.waitForOpen();

    expect(sim.devices('15550002003')).to.have.length(1);
    const sent = await device.sock!.sendMessage('15550002099@s.whatsapp.net', { text: 'after re-login' });
    await until(() => sim.inbox('15550002099').find((m) => m.id === sent!.key.id));
  });

  it('When the client pings on a short keep-alive interval, then every ping is answered and the socket stays open', async () => {
    const linked = await linkTestDevice(sim, '15550002008');
    await linked.end();
    const device = new TestDevice(sim.info, { keepAliveIntervalMs: 200 });
    devices.push(device);
    Object.assign(device.auth, linked.auth);
    const answers: string[] = [];
    device.connect();
    await device.waitForOpen();
    await sleep(300);
    // a ping answer is an empty iq result; the init queries are all answered by now
    device.sock!.ws.on(
      'frame',
      (frame: { tag?: string; attrs?: Record<string, string>; content?: unknown }) => {
        if (frame.tag === 'iq' && frame.attrs?.type === 'result' && frame.content === undefined)
          answers.push(frame.attrs.id!);
      },
    );

    // Pings every 200 ms: three answers waited for (quiet: 600 ms), not counted in a 1 s window.
    await until(() => answers.length >= 3, 10_000, 'three ping answers');
    expect(answers.length).to.be.at.least(3);
    expect(device.closes.filter((c) => c.statusCode !== DisconnectReason.restartRequired)).to.deep.equal([]);
  });

  it('When a device resumes from a stale Signal state, then the contact cannot decrypt and reports the message', async () => {
    const device = await linkTestDevice(sim, '15550002009');
    devices.push(device);
    const to = '15550002010@s.whatsapp.net';
    const first = await device.sock!.sendMessage(to, { text: 'first' });
    await until(() => sim.inbox('15550002010').find((m) => m.id === first!.key.id));
    const stale = device.auth.snapshot();
    const second = await device.sock!.sendMessage(to, { text: 'second' });
    await until(() => sim.inbox('15550002010').find((m) => m.id === second!.key.id));

    device.auth.restore(stale);
    const replayed = await device.sock!.sendMessage(to, { text: 'from stale state' });
    const failure = await until(() =>
      sim.undecryptable('15550002010').find((m) => m.id === replayed!.key.id),
    );

    expect(failure.from).to.equal('15550002009');
    expect(failure.error).to.be.a('string').and.not.equal('');
    expect(sim.inbox('15550002010').map((m) => m.text)).to.deep.equal(['first', 'second']);
  });

  it('When a contact writes while the device is offline, then the message arrives after the next login', async () => {
    const device = await linkTestDevice(sim, '15550002011');
    devices.push(device);
    await device.end();

    const { id, deliveredTo } = await sim.sendInbound('15550002012', '15550002011', 'while you were away');
    const received = new Promise<string | null | undefined>((resolve) => {
      device.connect();
      device.sock!.ev.on('messages.upsert', ({ messages }) => {
        const m = messages.find((x) => x.key.id === id);
        if (m) resolve(m.message?.conversation);
      });
    });

    expect(deliveredTo).to.deep.equal([1]);
    expect(await received).to.equal('while you were away');
  });

  it('When a second socket logs in with the same credentials, then the first is closed as replaced (440)', async () => {
    const first = await linkTestDevice(sim, '15550002013');
    devices.push(first);
    const second = new TestDevice(sim.info);
    devices.push(second);
    Object.assign(second.auth, { creds: first.auth.creds, keys: first.auth.keys });
    const replaced = first.waitForClose();

    second.connect();
    await second.waitForOpen();

    expect((await replaced).statusCode).to.equal(DisconnectReason.connectionReplaced);
    expect(sim.devices('15550002013')[0]!.connected).to.equal(true);
  });

  it('When the simulator drops the socket, then the device sees a closed connection and can log in again', async () => {
    const device = await linkTestDevice(sim, '15550002004');
    devices.push(device);
    const closed = device.waitForClose();

    expect(sim.drop('15550002004')).to.equal(1);
    const info = await closed;
    device.connect();
    await device.waitForOpen();

    expect(info.statusCode).to.equal(DisconnectReason.connectionClosed);
  });

  it('When logins are refused with 503, then the device closes with 503 and the next attempt opens', async () => {
    const device = await linkTestDevice(sim, '15550002005');
    devices.push(device);
    await device.end();
    sim.refuseLogin({ phone: '15550002005', reason: 503, count: 1 });

    device.connect();
    const refused = await device.waitForClose();
    device.connect();
    await device.waitForOpen();

    expect(refused.statusCode).to.equal(503);
  });

  it('When the device logs out, then the phone no longer lists it and its credentials are refused with 401', async () => {
    const device = await linkTestDevice(sim, '15550002006');
    devices.push(device);
    const closed = device.waitForClose();

    await device.sock!.logout();
    expect((await closed).statusCode).to.equal(DisconnectReason.loggedOut);
    await until(() => sim.devices('15550002006').length === 0, 5_000, 'device removal');

    device.connect();
    const refused = await device.waitForClose();
    expect(refused.statusCode).to.equal(DisconnectReason.loggedOut);
  });

  it('When the phone unlinks the device, then the device closes with 401 (device_removed)', async () => {
    const device = await linkTestDevice(sim, '15550002007');
    devices.push(device);
    const closed = device.waitForClose();

    const removed = sim.unlink('15550002007');
    const info = await closed;

    expect(removed).to.have.length(1);
    expect(info.statusCode).to.equal(DisconnectReason.loggedOut);
    expect(sim.devices('15550002007')).to.deep.equal([]);
  });
});
