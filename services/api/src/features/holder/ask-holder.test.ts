import { expect } from 'chai';
import type { DeviceCommandReply } from '@mgw/contracts';
import { HOLDER_WAIT_SECONDS, askHolder } from './ask-holder.js';
import { MemoryHolder, said } from './memory-holder.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('askHolder: the API asks the holder of a device (an in-memory holder)', () => {
  let mh: MemoryHolder;
  const deviceId = 'ah-device';

  beforeEach(() => {
    mh = new MemoryHolder();
  });

  it('When no process listens for device commands, then no_device (nobody holds it)', async () => {
    mh.connect(deviceId);
    expect(await askHolder(mh.holder, deviceId, { type: 'groups-list' }, { wait: 5 })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(mh.asked.map((a) => a.waitSeconds)).to.deep.equal([5]);
  });

  it('When the session is not connected (never linked, or connecting), then no_device and the command never goes out', async () => {
    mh.sessions.update('linking', 'connecting');
    const heardLinking = mh.fakeSender('linking', () => ({ ok: true, data: { groups: [] } }));
    const heardNever = mh.fakeSender('never', () => ({ ok: true, data: { groups: [] } }));

    for (const id of ['linking', 'never'])
      expect(await askHolder(mh.holder, id, { type: 'groups-list' }), id).to.deep.equal({
        ok: false,
        reason: 'no_device',
      });
    expect([...heardLinking, ...heardNever]).to.deep.equal([]);
    expect(mh.asked).to.deep.equal([]);
  });

  it('When the holder answers with data, then ok with that data; the command went addressed (the device, a fresh request id) with the default wait', async () => {
    const data = { groups: [{ id: '1203630@g.us', subject: 'Team', size: 3 }] };
    const heard = mh.device(deviceId, () => ({ ok: true, data }) as DeviceCommandReply);

    const first = await askHolder(mh.holder, deviceId, { type: 'groups-list' });
    const second = await askHolder(mh.holder, deviceId, { type: 'group-leave', groupId: '1203630@g.us' });

    expect(first).to.deep.equal({ ok: true, data });
    expect(second).to.deep.equal({ ok: true, data });
    expect(heard.map(said)).to.deep.equal([
      { type: 'groups-list', deviceId },
      { type: 'group-leave', groupId: '1203630@g.us', deviceId },
    ]);
    expect(heard[0]!.requestId).to.match(UUID);
    expect(heard[1]!.requestId).to.match(UUID).and.not.equal(heard[0]!.requestId);
    expect(mh.asked.map((a) => a.waitSeconds)).to.deep.equal([HOLDER_WAIT_SECONDS, HOLDER_WAIT_SECONDS]);
  });

  it('When the holder answers an error of its command, then failed with that code; one without a code, failed alone', async () => {
    const codes = ['not-admin', 'no-key', undefined];
    mh.device(deviceId, () => {
      const error = codes.shift();
      return error === undefined ? { ok: false } : { ok: false, error };
    });

    expect(await askHolder(mh.holder, deviceId, { type: 'group-get', groupId: 'x@g.us' })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-admin',
    });
    const label = { id: '7', name: 'VIP', color: 1, deleted: false };
    expect(await askHolder(mh.holder, deviceId, { type: 'app-state-label', label })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-key',
    });
    expect(await askHolder(mh.holder, deviceId, { type: 'groups-list' })).to.deep.equal({
      ok: false,
      reason: 'failed',
    });
  });

  it("When the holder answers that its socket is not open (the sender's 'not-connected'), then not_connected", async () => {
    mh.device(deviceId, () => ({ ok: false, error: 'not-connected' }));
    expect(await askHolder(mh.holder, deviceId, { type: 'account-profile-get' })).to.deep.equal({
      ok: false,
      reason: 'not_connected',
    });
  });

  it('When the holder answers ok without data, then that is a failure, unless the asker takes ok alone (a download, a read receipt)', async () => {
    const heard = mh.device(deviceId, () => ({ ok: true }));

    expect(await askHolder(mh.holder, deviceId, { type: 'groups-list' })).to.deep.equal({
      ok: false,
      reason: 'failed',
    });
    expect(
      await askHolder(mh.holder, deviceId, { type: 'mark-read', keys: [] }, { okWithoutData: true }),
    ).to.deep.equal({ ok: true, data: undefined });
    expect(heard.map((c) => c.type)).to.deep.equal(['groups-list', 'mark-read']);
  });

  it('When senders listen but none holds the device, then timeout, each sender having heard the command', async () => {
    mh.connect(deviceId);
    const heard = mh.fakeSender('another-device', () => ({ ok: true, data: { groups: [] } }));

    expect(await askHolder(mh.holder, deviceId, { type: 'groups-list' }, { wait: 1 })).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    expect(heard.map((c) => c.deviceId)).to.deep.equal([deviceId]);
    expect(mh.asked.map((a) => a.waitSeconds)).to.deep.equal([1]);
  });

  it('When the holder hears the command and never answers, then timeout', async () => {
    const heard = mh.device(deviceId, () => undefined);
    expect(await askHolder(mh.holder, deviceId, { type: 'account-profile-get' }, { wait: 1 })).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    expect(heard).to.have.length(1);
  });

  it('When the asker gives no sessions (it checked already, or needs no open socket), then the holder is asked whatever the session says', async () => {
    const heard = mh.fakeSender(deviceId, () => ({ ok: true }));

    expect(
      await askHolder(
        mh.unchecked,
        deviceId,
        { type: 'download-media', messageId: 'm-1' },
        { requestId: 'req-given', okWithoutData: true },
      ),
    ).to.deep.equal({ ok: true, data: undefined });
    expect(heard).to.deep.equal([
      { type: 'download-media', messageId: 'm-1', deviceId, requestId: 'req-given' },
    ]);
  });

  it('When a handoff is given, then it is put before the command goes and removed after the reply (and after a timeout); not put at all for a device not connected', async () => {
    const steps: string[] = [];
    let there = false;
    const handoff = {
      put: async () => {
        steps.push('put');
        there = true;
      },
      remove: async () => {
        steps.push('remove');
        there = false;
      },
    };
    let answers = 0;
    const seenThere: boolean[] = [];
    mh.device(deviceId, () => {
      seenThere.push(there);
      // The first command is answered, the second never (a holder that hangs).
      return answers++ === 0
        ? ({ ok: true, data: { channel: { id: '1@newsletter' } } } as DeviceCommandReply)
        : undefined;
    });
    const command = { type: 'channel-get', key: { kind: 'jid', id: '1@newsletter' } } as const;

    expect((await askHolder(mh.holder, deviceId, command, { handoff })).ok).to.equal(true);
    expect(there).to.equal(false);
    expect(await askHolder(mh.holder, deviceId, command, { handoff, wait: 1 })).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    expect(there).to.equal(false);
    expect(seenThere, 'the handoff was there when the holder heard the command').to.deep.equal([true, true]);

    mh.sessions.update(deviceId, 'connecting');
    expect(await askHolder(mh.holder, deviceId, command, { handoff })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(steps).to.deep.equal(['put', 'remove', 'put', 'remove']);
  });

  it('When the holder fails while the handoff is out, then the handoff is still taken away and the failure is thrown', async () => {
    const steps: string[] = [];
    mh.device(deviceId, () => {
      throw new Error('the holder broke');
    });
    const handoff = { put: async () => steps.push('put'), remove: async () => steps.push('remove') };
    let thrown: unknown;
    try {
      await askHolder(mh.holder, deviceId, { type: 'account-photo-remove' }, { handoff });
    } catch (err) {
      thrown = err;
    }
    expect((thrown as Error).message).to.equal('the holder broke');
    expect(steps).to.deep.equal(['put', 'remove']);
  });
});
