import { expect } from 'chai';
import { ERRORS, keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';
import { callApi, stuckDevice } from './helpers.js';

const DOWN = { success: false, error: ERRORS.connectionServiceDown };

describe('e2e: /connect and /disconnect without a live connection service (real services, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({ senders: 0 });

  const connectionProcess = () =>
    stack().processes.find(
      (p) => p.name.startsWith('connection') && p.child.exitCode === null && p.child.signalCode === null,
    )!;

  it('When the only connection service is killed while a disconnect waits, then that request ends 503 within seconds and the next ones answer 503 at once', async () => {
    const deviceId = `lv-${Math.random().toString(36).slice(2, 8)}`;
    await stuckDevice(stack(), deviceId);
    const token = await stack().createToken(deviceId);
    const waiting = callApi(stack().apiUrl, token, 'POST', '/disconnect');
    await waitFor(async () => (await stack().redis.exists(keys.disconnecting(deviceId))) === 1, {
      what: 'the disconnect running',
    });
    const proc = connectionProcess();
    const killedAt = Date.now();
    proc.child.kill('SIGKILL');
    await proc.exited;

    const ended = await waiting;
    const afterKill = Date.now() - killedAt;
    const connect = await callApi(stack().apiUrl, stack().token, 'POST', '/connect');
    const disconnect = await callApi(stack().apiUrl, stack().token, 'POST', '/disconnect');
    console.log(
      `      waiting disconnect answered ${ended.status} ${afterKill} ms after the kill; ` +
        `then connect ${connect.status} in ${connect.ms} ms, disconnect ${disconnect.status} in ${disconnect.ms} ms`,
    );
    // DOWN is the answer of the liveness check (the API's 30 s reply timeout answers otherwise):
    // the body shows what ended the wait; the bounds are 10 x the quiet times, under that timeout
    // for the next ones.
    expect(ended.status).to.equal(503);
    expect(ended.body).to.deep.equal(DOWN);
    expect(afterKill, 'answered after the kill (ms)').to.be.lessThan(60_000); // quiet: 5000 ms
    for (const r of [connect, disconnect]) {
      expect(r.status).to.equal(503);
      expect(r.body).to.deep.equal(DOWN);
      expect(r.ms).to.be.lessThan(10_000); // quiet: 25 ms
    }
  });

  it('When a connection service is started again, then /connect answers a QR', async () => {
    await stack().startService('connection');
    const res = await callApi(stack().apiUrl, stack().token, 'POST', '/connect');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.qrCode).to.match(/^data:image\/png;base64,/);
  });

  it('When the connection service stops gracefully, then it withdraws at once and /connect answers 503 within a second or two', async () => {
    const proc = connectionProcess();
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
    expect(await stack().redis.zcard(keys.connectionWorkers())).to.equal(0);
    const res = await callApi(stack().apiUrl, stack().token, 'POST', '/connect');
    console.log(`      connect after a graceful stop: ${res.status} in ${res.ms} ms`);
    expect(res.status).to.equal(503);
    expect(res.body).to.deep.equal(DOWN);
    // By the liveness (DOWN), within 10 x its quiet time and under the 30 s reply timeout.
    expect(res.ms).to.be.lessThan(20_000); // quiet: 1500 ms
  });
});
