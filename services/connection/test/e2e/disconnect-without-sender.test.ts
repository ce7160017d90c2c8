import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { MessageStore } from '@mgw/store';
import { queueMessages, useStack, waitFor } from '@mgw/testing';

describe('e2e: disconnect when no sender holds the device (real services, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({ senders: 0 });
  const phone = '15550600001';

  it('When nobody holds the linked device, then the connection service logs it out itself and fails its waiting jobs with logged_out', async () => {
    const connect = await stack().api<{ qrCode: string }>('POST', '/connect');
    await stack().simApi('POST', '/phone/link', { qr: connect.body.qrCode, phone, name: 'Solo' });
    await waitFor(async () => (await stack().redis.sismember(keys.linkedDevices(), stack().deviceId)) === 1, {
      what: 'device linked',
    });
    expect((await stack().simApi<{ devices: unknown[] }>('GET', `/devices/${phone}`)).devices).to.have.length(
      1,
    );

    // Jobs accepted earlier, still waiting because no sender runs.
    const store = new MessageStore(stack().redis, 3600);
    const { jobs, queue } = await queueMessages({
      redis: stack().redis,
      deviceId: stack().deviceId,
      to: ['15550600002', '15550600003'],
      content: { text: 'waiting' },
    });
    const ids = jobs.map((j) => j.messageId);

    const res = await stack().api<{ success: boolean; message: string }>('POST', '/disconnect');
    expect(res.body).to.include({ success: true, message: 'Disconnected and logged out' });
    await waitFor(
      async () =>
        (await stack().simApi<{ devices: unknown[] }>('GET', `/devices/${phone}`)).devices.length === 0,
      {
        what: 'device removed on the phone',
      },
    );
    expect((await stack().api('GET', '/status')).body.status).to.equal('disconnected');
    for (const id of ids) {
      expect(await store.get(stack().deviceId, id)).to.include({ status: 'failed', error: 'logged_out' });
      // ended: no longer waiting for anyone, so a later link cannot send it
      expect(await queue.getJob(id)).to.equal(undefined);
    }
    expect(await stack().redis.keys(keys.authPattern(stack().deviceId))).to.deep.equal([]);
    await queue.close();

    // The connection service logged each request when it took it up and when it answered.
    const lines = stack()
      .processes.filter((p) => p.name.startsWith('connection'))
      .flatMap((p) => p.output)
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return {};
        }
      })
      .filter((l) => l.deviceId === stack().deviceId && l.action === 'disconnect');
    expect(lines.map((l) => l.message)).to.deep.equal([
      'connection request taken up',
      'connection request answered',
    ]);
    expect(lines[0]!.queuedMs).to.be.a('number').and.at.least(0);
    expect(lines[1]).to.include({ level: 'info', status: 200 });
    expect(lines[1]!.tookMs).to.be.a('number').and.at.least(0);
  });
});
