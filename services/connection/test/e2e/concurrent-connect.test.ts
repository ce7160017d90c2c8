import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import { useStack } from '@mgw/testing';
import { callApi, socketsOpened, total, type Answer } from './helpers.js';

describe('e2e: concurrent connects and client races (real services, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({ senders: 0 });
  let api1 = '';
  let api2 = '';

  before(async () => {
    api1 = stack().apiUrl;
    await stack().startService('api');
    api2 = stack().apiUrl;
  });

  it('When two tokens of one device connect at once through two API replicas, then all answer the same QR within seconds and one pairing socket is opened', async () => {
    const deviceId = stack().deviceId;
    const token2 = await stack().createToken(deviceId);
    const answers = await Promise.all([
      callApi(api1, stack().token, 'POST', '/connect?rawQrCode=true'),
      callApi(api2, token2, 'POST', '/connect?rawQrCode=true'),
      callApi(api1, token2, 'GET', '/connect'),
    ]);
    console.log(`      answered in ${answers.map((a) => a.ms).join(', ')} ms`);
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
    expect(answers[0]!.body.qrCode).to.be.a('string');
    expect(answers[1]!.body.qrCode).to.equal(answers[0]!.body.qrCode);
    expect(answers[2]!.body.qrCode).to.match(/^data:image\/png;base64,/);
    // All from the one pairing (a second one would wait up to 30 s for a QR of its own): 10 x the
    // quiet time, under that.
    expect(Math.max(...answers.map((a) => a.ms)), 'slowest answer (ms)').to.be.lessThan(25_000); // quiet: 1000 ms
    expect(total(socketsOpened(stack(), deviceId)), 'pairing sockets').to.equal(1);
  });

  it('When two connection replicas get connects of several devices at once, then every connect of a device answers its one QR and one socket is opened per device', async () => {
    await stack().startService('connection');
    const devices = Array.from({ length: 6 }, (_, i) => `cc-${i}-${Math.random().toString(36).slice(2, 6)}`);
    const tokens = await Promise.all(devices.map((d) => stack().createToken(d)));
    const pairs = await Promise.all(
      tokens.map((token) =>
        Promise.all([
          callApi(api1, token, 'POST', '/connect?rawQrCode=true'),
          callApi(api2, token, 'POST', '/connect?rawQrCode=true'),
        ]),
      ),
    );
    const perReplica: Record<string, number> = {};
    devices.forEach((deviceId, i) => {
      const [x, y] = pairs[i]!;
      expect([x.status, y.status], JSON.stringify([x.body, y.body])).to.deep.equal([200, 200]);
      expect(y.body.qrCode).to.be.a('string').and.equal(x.body.qrCode);
      const opened = socketsOpened(stack(), deviceId);
      expect(total(opened), `${deviceId} pairing sockets`).to.equal(1);
      for (const [name, n] of Object.entries(opened)) perReplica[name] = (perReplica[name] ?? 0) + n;
    });
    const slowest = Math.max(...pairs.flat().map((a) => a.ms));
    console.log(`      sockets per replica ${JSON.stringify(perReplica)}; slowest answer ${slowest} ms`);
    // As above: 10 x the quiet time, under the 30 s a pairing may wait for its QR.
    expect(slowest, 'slowest answer (ms)').to.be.lessThan(25_000); // quiet: 2000 ms
  });

  it('When a connect with another method arrives during a pairing, then 409 "retry with forceNew", and with forceNew it answers a pairing code', async () => {
    const token = await stack().createToken(`cm-${Math.random().toString(36).slice(2, 8)}`);
    expect((await callApi(api1, token, 'POST', '/connect')).status).to.equal(200);
    const other = await callApi(api2, token, 'POST', '/connect?method=pairingCode&phoneNumber=15550800001');
    expect(other.status).to.equal(409);
    expect(other.body).to.deep.equal({ success: false, error: ERRORS.pairingOtherMethod });
    const forced = await callApi(
      api2,
      token,
      'POST',
      '/connect?method=pairingCode&phoneNumber=15550800001&forceNew=true',
    );
    expect(forced.status, JSON.stringify(forced.body)).to.equal(200);
    expect(forced.body.pairingCode).to.match(/^[A-Z0-9]{8}$/);
  });

  it('When /connect races /disconnect of the same device, then the connect answers 200 or 409 with a catalogued error and the disconnect 200, never 5xx', async () => {
    const token = await stack().createToken(`cr-${Math.random().toString(36).slice(2, 8)}`);
    const seen: Answer[] = [];
    for (let round = 0; round < 10; round++) {
      const delay = (round % 5) * 40;
      const [connect, disconnect] = await Promise.all([
        callApi(api1, token, 'POST', '/connect?rawQrCode=true'),
        new Promise((r) => setTimeout(r, delay)).then(() => callApi(api2, token, 'POST', '/disconnect')),
      ]);
      seen.push(connect);
      expect(disconnect.status, JSON.stringify(disconnect.body)).to.equal(200);
      if (connect.status === 200) expect(connect.body.qrCode).to.be.a('string');
      else {
        expect(connect.status, JSON.stringify(connect.body)).to.equal(409);
        expect([ERRORS.disconnectInProgress, ERRORS.pairingCancelledByDisconnect]).to.include(
          connect.body.error,
        );
      }
    }
    const histogram: Record<string, number> = {};
    for (const a of seen) {
      const k = `${a.status} ${String(a.body.error ?? 'QR')}`;
      histogram[k] = (histogram[k] ?? 0) + 1;
    }
    console.log(`      connect answers: ${JSON.stringify(histogram)}`);
  });
});
