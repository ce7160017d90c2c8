import { expect } from 'chai';
import { Queue } from 'bullmq';
import { BULL_PREFIX, CONNECTION_QUEUE, ERRORS, keys, type ConnectionRequest } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';
import { callApi, stuckDevice } from './helpers.js';

describe('e2e: a device stuck on an unresponsive owner holds up nobody else (real services, simulator)', function () {
  this.timeout(120_000);
  // The connection service gives up a logout 5 s before the API stops waiting: here after 20 s,
  // the window in which the other devices' connects must be answered (about 1 s for all 12 on a
  // quiet machine, 8 s seen with four stacks starting on two cores).
  const stack = useStack({ senders: 0, env: { CONNECTION_REPLY_TIMEOUT_MS: '25000' } });

  it('When disconnects of a stuck device pile up, then connects of 12 other devices get their QR within seconds, the stuck device answers 409 to a connect and its disconnects end together with 503', async () => {
    const stuck = stack().deviceId;
    await stuckDevice(stack(), stuck);
    const stuckTokens = [stack().token, await stack().createToken(stuck)];
    const others = Array.from({ length: 12 }, (_, i) => `bo-${i}-${Math.random().toString(36).slice(2, 6)}`);
    const otherTokens = await Promise.all(others.map((d) => stack().createToken(d)));

    // 20 disconnects of the stuck device (two tokens), then the other devices connect.
    const started = Date.now();
    const disconnects = Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        callApi(stack().apiUrl, stuckTokens[i % 2]!, 'POST', '/disconnect'),
      ),
    );
    let disconnectsEnded = false;
    void disconnects.then(() => (disconnectsEnded = true));
    await waitFor(async () => (await stack().redis.exists(keys.disconnecting(stuck))) === 1, {
      what: 'the stuck disconnect running',
    });
    const raced = await callApi(stack().apiUrl, stuckTokens[1]!, 'POST', '/connect');
    const racedWhileStuck = !disconnectsEnded;
    const connects = await Promise.all(
      otherTokens.map((token) => callApi(stack().apiUrl, token, 'POST', '/connect?rawQrCode=true')),
    );
    const times = connects.map((c) => c.ms).sort((a, b) => a - b);
    console.log(
      `      12 connects while the stuck disconnect ran: p50 ${times[6]} ms, max ${times[11]} ms; ` +
        `connect of the stuck device answered ${raced.status} in ${raced.ms} ms`,
    );
    expect(raced.status).to.equal(409);
    expect(raced.body).to.deep.equal({ success: false, error: ERRORS.disconnectInProgress });
    // At once: answered while its disconnects still waited (an order, not a clock).
    expect(racedWhileStuck, 'the connect answered only after the stuck disconnects').to.equal(true);
    for (const c of connects) {
      expect(c.status, JSON.stringify(c.body)).to.equal(200);
      expect(c.body.qrCode).to.be.a('string');
    }
    // Not held up: every connect was answered while the stuck device's disconnects still waited
    // (they end after 20 s, 10 x and more what the 12 connects take): an order, not a clock.
    expect(disconnectsEnded, 'the connects were answered only after the stuck disconnects').to.equal(false);

    const ended = await disconnects;
    const spread = Math.max(...ended.map((d) => d.ms)) - Math.min(...ended.map((d) => d.ms));
    console.log(`      20 disconnects ended after ${Date.now() - started} ms (spread ${spread} ms)`);
    for (const d of ended) {
      expect(d.status).to.equal(503);
      expect(d.body).to.deep.equal({ success: false, error: ERRORS.logoutIncomplete });
    }
    // The logout did not happen: the device stays linked for its senders.
    expect(await stack().redis.sismember(keys.linkedDevices(), stuck)).to.equal(1);
    // The API sent the 20 identical requests as one job: one slot of the connection service.
    const queue = new Queue<ConnectionRequest>(CONNECTION_QUEUE, {
      connection: stack().redis.duplicate(),
      prefix: BULL_PREFIX,
    });
    const handled = (await queue.getCompleted()).filter(
      (j) => j.data.deviceId === stuck && j.data.action === 'disconnect',
    );
    await queue.close();
    expect(handled).to.have.length(1);
  });
});
