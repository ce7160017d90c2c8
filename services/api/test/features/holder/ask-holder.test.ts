import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys, type DeviceCommandReply } from '@mgw/contracts';
import type { SessionStore } from '@mgw/store';
import { askHolder, type DeviceHolder } from '../../../src/features/holder/ask-holder.js';
import { HolderFixture, type HolderAnswer } from '../../helpers/fake-holder.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('askHolder: the API asks the holder of a device (real Redis, a fake sender)', () => {
  const fx = new HolderFixture('ask-holder-test');
  let redis: Redis;
  let sessions: SessionStore;
  let holder: DeviceHolder;
  const freshDevice = () => fx.freshDevice('ah');
  const connect = (deviceId: string) => fx.connect(deviceId);
  const fakeSender = (held: string, answer: HolderAnswer) => fx.fakeSender(held, answer);

  beforeEach(() => {
    fx.setUp();
    ({ redis, sessions, holder } = fx);
  });
  afterEach(() => fx.tearDown());

  it('When no process listens for device commands, then no_device at once (not after the wait)', async () => {
    const deviceId = freshDevice();
    await connect(deviceId);
    const started = Date.now();
    expect(await askHolder(holder, deviceId, { type: 'groups-list' }, { wait: 5 })).to.deep.equal({
      ok: false,
      reason: 'no_device',
    });
    expect(Date.now() - started).to.be.below(1000);
  });

  it('When the session is not connected (never linked, or connecting), then no_device and the command never goes out', async () => {
    const linking = freshDevice();
    const never = freshDevice();
    await sessions.update(linking, 'connecting');
    const heardLinking = await fakeSender(linking, () => ({ ok: true, data: { groups: [] } }));
    const heardNever = await fakeSender(never, () => ({ ok: true, data: { groups: [] } }));

    for (const deviceId of [linking, never])
      expect(await askHolder(holder, deviceId, { type: 'groups-list' }), deviceId).to.deep.equal({
        ok: false,
        reason: 'no_device',
      });
    expect([...heardLinking, ...heardNever]).to.deep.equal([]);
  });

  it('When the holder answers with data, then ok with that data, and the command went addressed: the device and a fresh request id', async () => {
    const deviceId = freshDevice();
    await connect(deviceId);
    const data = { groups: [{ id: '1203630@g.us', subject: 'Team', size: 3 }] };
    const heard = await fakeSender(deviceId, () => ({ ok: true, data }) as DeviceCommandReply);

    const first = await askHolder(holder, deviceId, { type: 'groups-list' });
    const second = await askHolder(holder, deviceId, { type: 'group-leave', groupId: '1203630@g.us' });

    expect(first).to.deep.equal({ ok: true, data });
    expect(second).to.deep.equal({ ok: true, data });
    expect(heard.map(({ requestId: _r, ...rest }) => rest)).to.deep.equal([
      { type: 'groups-list', deviceId },
      { type: 'group-leave', groupId: '1203630@g.us', deviceId },
    ]);
    expect(heard[0]!.requestId).to.match(UUID);
    expect(heard[1]!.requestId).to.match(UUID).and.not.equal(heard[0]!.requestId);
    expect(await redis.exists(keys.commandReply(heard[0]!.requestId))).to.equal(0);
  });

  it('When the holder answers an error of its command, then failed with that code; one without a code, failed alone', async () => {
    const deviceId = freshDevice();
    await connect(deviceId);
    const codes = ['not-admin', 'no-key', undefined];
    await fakeSender(deviceId, () => {
      const error = codes.shift();
      return error === undefined ? { ok: false } : { ok: false, error };
    });

    expect(await askHolder(holder, deviceId, { type: 'group-get', groupId: 'x@g.us' })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'not-admin',
    });
    const label = { id: '7', name: 'VIP', color: 1, deleted: false };
    expect(await askHolder(holder, deviceId, { type: 'app-state-label', label })).to.deep.equal({
      ok: false,
      reason: 'failed',
      code: 'no-key',
    });
    expect(await askHolder(holder, deviceId, { type: 'groups-list' })).to.deep.equal({
      ok: false,
      reason: 'failed',
    });
  });

  it("When the holder answers that its socket is not open (the sender's 'not-connected'), then not_connected", async () => {
    const deviceId = freshDevice();
    await connect(deviceId);
    await fakeSender(deviceId, () => ({ ok: false, error: 'not-connected' }));
    expect(await askHolder(holder, deviceId, { type: 'account-profile-get' })).to.deep.equal({
      ok: false,
      reason: 'not_connected',
    });
  });

  it('When the holder answers ok without data, then that is a failure, unless the asker takes ok alone (a download, a read receipt)', async () => {
    const deviceId = freshDevice();
    await connect(deviceId);
    const heard = await fakeSender(deviceId, () => ({ ok: true }));

    expect(await askHolder(holder, deviceId, { type: 'groups-list' })).to.deep.equal({
      ok: false,
      reason: 'failed',
    });
    expect(
      await askHolder(holder, deviceId, { type: 'mark-read', keys: [] }, { okWithoutData: true }),
    ).to.deep.equal({ ok: true, data: undefined });
    expect(heard.map((c) => c.type)).to.deep.equal(['groups-list', 'mark-read']);
  });

  it('When senders listen but none holds the device, then timeout once the given wait is over', async () => {
    const deviceId = freshDevice();
    await connect(deviceId);
    const heard = await fakeSender(freshDevice(), () => ({ ok: true, data: { groups: [] } }));
    const started = Date.now();

    expect(await askHolder(holder, deviceId, { type: 'groups-list' }, { wait: 1 })).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    expect(Date.now() - started).to.be.within(900, 4000);
    expect(heard.map((c) => c.deviceId)).to.deep.equal([deviceId]);
  });

  it('When the holder hears the command and never answers, then timeout once the given wait is over', async () => {
    const deviceId = freshDevice();
    await connect(deviceId);
    const heard = await fakeSender(deviceId, () => undefined);
    const started = Date.now();

    expect(await askHolder(holder, deviceId, { type: 'account-profile-get' }, { wait: 1 })).to.deep.equal({
      ok: false,
      reason: 'timeout',
    });
    expect(Date.now() - started).to.be.within(900, 4000);
    expect(heard).to.have.length(1);
  });

  it('When the asker gives no sessions (it checked already, or needs no open socket), then the holder is asked whatever the session says', async () => {
    const deviceId = freshDevice();
    const heard = await fakeSender(deviceId, () => ({ ok: true }));
    const unchecked: DeviceHolder = { commands: holder.commands };

    expect(
      await askHolder(
        unchecked,
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
    const deviceId = freshDevice();
    await connect(deviceId);
    const key = `ah-test:handoff:${deviceId}`;
    const steps: string[] = [];
    const handoff = {
      put: () => (steps.push('put'), redis.set(key, 'picture', 'EX', 60)),
      remove: () => (steps.push('remove'), redis.del(key)),
    };
    let answers = 0;
    const seenThere: number[] = [];
    await fakeSender(deviceId, async () => {
      seenThere.push(await redis.exists(key));
      // The first command is answered, the second never (a holder that hangs).
      return answers++ === 0
        ? ({ ok: true, data: { channel: { id: '1@newsletter' } } } as DeviceCommandReply)
        : undefined;
    });

    const answered = await askHolder(
      holder,
      deviceId,
      { type: 'channel-get', key: { kind: 'jid', id: '1@newsletter' } },
      { handoff },
    );
    expect(answered.ok).to.equal(true);
    expect(await redis.exists(key)).to.equal(0);
    const timedOut = await askHolder(
      holder,
      deviceId,
      { type: 'channel-get', key: { kind: 'jid', id: '1@newsletter' } },
      { handoff, wait: 1 },
    );
    expect(timedOut).to.deep.equal({ ok: false, reason: 'timeout' });
    expect(await redis.exists(key)).to.equal(0);
    expect(seenThere, 'the handoff was there when the holder heard the command').to.deep.equal([1, 1]);

    await sessions.update(deviceId, 'connecting');
    expect(
      await askHolder(
        holder,
        deviceId,
        { type: 'channel-get', key: { kind: 'jid', id: '1@newsletter' } },
        { handoff },
      ),
    ).to.deep.equal({ ok: false, reason: 'no_device' });
    expect(steps).to.deep.equal(['put', 'remove', 'put', 'remove']);
  });
});
