import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

interface ConnectBody {
  success: boolean;
  status?: string;
  qrCode?: string;
  pairingCode?: string;
  message?: string;
  error?: string;
}

describe('e2e: connect, repeated connect, forceNew, pairing code, disconnect, unlink (real services, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack();

  async function devicesOf(phone: string): Promise<unknown[]> {
    return (await stack().simApi<{ devices: unknown[] }>('GET', `/devices/${phone}`)).devices;
  }

  it('When connect is called twice while pairing, then both answer the same QR (one socket) and forceNew gives a new one', async () => {
    const first = await stack().api<ConnectBody>('POST', '/connect?rawQrCode=true');
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ success: true, status: 'connecting' });
    expect(first.body.qrCode).to.match(/^[^,]+,[^,]+,[^,]+,[^,]+/);
    const again = await stack().api<ConnectBody>('POST', '/connect?rawQrCode=true');
    expect(again.body.qrCode).to.equal(first.body.qrCode);
    const png = await stack().api<ConnectBody>('GET', '/connect');
    expect(png.body.qrCode).to.match(/^data:image\/png;base64,/);

    const fresh = await stack().api<ConnectBody>('POST', '/connect?rawQrCode=true&forceNew=true');
    expect(fresh.body).to.include({ success: true, status: 'connecting' });
    expect(fresh.body.qrCode).to.not.equal(first.body.qrCode);
    // The discarded QR's identity is gone: the phone cannot link it any more; the new one links.
    await stack().simApi('POST', '/phone/link', { qr: fresh.body.qrCode, phone: '15550200001', name: 'Bob' });
    const status = await stack().waitForStatus('connected');
    expect(status).to.include({ phone: '15550200001', name: 'Bob' });
  });

  it('When connect is called on a connected device, then it answers success with status connected', async () => {
    const res = await stack().api<ConnectBody>('POST', '/connect');
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ success: true, status: 'connected' });
    expect(res.body.qrCode).to.equal(undefined);
  });

  it('When disconnect is called, then the phone no longer lists the device, status is disconnected and sends are refused', async () => {
    expect(await devicesOf('15550200001')).to.have.length(1);
    const res = await stack().api<ConnectBody>('POST', '/disconnect');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, message: 'Disconnected and logged out' });
    await waitFor(async () => (await devicesOf('15550200001')).length === 0, {
      what: 'device removed on the phone',
    });
    const status = await stack().api<{ status: string; phone?: string }>('GET', '/status');
    expect(status.body.status).to.equal('disconnected');
    expect(status.body.phone).to.equal(undefined);
    expect(await stack().redis.keys(keys.authPattern(stack().deviceId))).to.deep.equal([]);
    const send = await stack().api<ConnectBody>('POST', '/send', { to: '15550200002', text: 'after logout' });
    expect(send.body).to.include({ success: false, error: 'No connected messenger device found' });
    const again = await stack().api<ConnectBody>('POST', '/disconnect');
    expect(again.body).to.include({ success: true, message: 'Already disconnected' });
  });

  it('When linking by pairing code, then the phone enters the 8-character code and the device connects', async () => {
    const phone = '15550200003';
    const res = await stack().api<ConnectBody>('POST', `/connect?method=pairingCode&phoneNumber=${phone}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ success: true, status: 'connecting' });
    expect(res.body.pairingCode).to.match(/^[A-Z0-9]{8}$/);
    const again = await stack().api<ConnectBody>('POST', `/connect?method=pairingCode&phoneNumber=${phone}`);
    expect(again.body.pairingCode, JSON.stringify(again.body)).to.equal(res.body.pairingCode);
    await stack().simApi('POST', '/phone/link', { pairingCode: res.body.pairingCode, phone, name: 'Carol' });
    const status = await stack().waitForStatus('connected');
    expect(status).to.include({ phone, name: 'Carol' });
  });

  it('When the phone unlinks the device while jobs wait, then status becomes disconnected and the jobs fail with logged_out', async () => {
    // A long per-device gap keeps all but the first message waiting in the queue.
    await stack().redis.hset(keys.deviceSettings(stack().deviceId), 'sendGapMs', '60000');
    const sent = await stack().api<{ messageIds: string[] }>('POST', '/send', {
      to: ['15550200004', '15550200005', '15550200006', '15550200007'],
      text: 'paced',
    });
    const ids = sent.body.messageIds;
    await waitFor(async () => (await stack().inbox('15550200004')).length === 1, { what: 'first message' });
    await stack().simApi('POST', '/phone/unlink', { phone: '15550200003' });
    await stack().waitForStatus('disconnected', 10_000);
    await waitFor(
      async () => {
        const records = await Promise.all(
          ids
            .slice(1)
            .map(
              async (id) =>
                (await stack().api<{ data: { status: string } }>('GET', `/messages/${id}`)).body.data,
            ),
        );
        return records.every((r) => r.status === 'failed');
      },
      { timeoutMs: 20_000, what: 'waiting jobs failed' },
    );
    for (const id of ids.slice(1)) {
      const r = (await stack().api<{ data: { status: string; error: string } }>('GET', `/messages/${id}`))
        .body.data;
      expect(r).to.include({ status: 'failed', error: 'logged_out' });
    }
    expect(await stack().redis.sismember(keys.linkedDevices(), stack().deviceId)).to.equal(0);
    await stack().redis.del(keys.deviceSettings(stack().deviceId));
  });

  it('When the connection service dies mid-pairing, then a new one ignores the stale QR and pairs afresh', async () => {
    const first = await stack().api<ConnectBody>('POST', '/connect?rawQrCode=true');
    expect(first.body.qrCode).to.be.a('string');
    const old = stack().processes.find(
      (p) => p.name.startsWith('connection') && p.child.exitCode === null && p.child.signalCode === null,
    )!;
    old.child.kill('SIGKILL');
    await old.exited;
    await stack().startService('connection');
    // Until the dead replica's lease runs out (LEASE_TTL_MS) nobody can tell it from a slow one.
    await waitFor(async () => (await stack().redis.exists(keys.lease(stack().deviceId))) === 0, {
      what: 'the dead pairing lease expired',
    });
    const next = await stack().api<ConnectBody>('POST', '/connect?rawQrCode=true');
    expect(next.status, JSON.stringify(next.body)).to.equal(200);
    expect(next.body.qrCode).to.be.a('string').and.not.equal(first.body.qrCode);
    await stack().simApi('POST', '/phone/link', {
      qr: next.body.qrCode,
      phone: '15550200008',
      name: 'After crash',
    });
    const status = await stack().waitForStatus('connected');
    expect(status.phone).to.equal('15550200008');
  });
});
