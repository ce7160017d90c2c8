import { expect } from 'chai';
import { keys, type DeviceCommandReply } from '@mgw/contracts';
import { MemoryHolder, MemoryRedis, said } from '../test-support.js';
import { reconnectDevice } from './reconnect-device.js';

/** A proxy change reaches the device's holder: without an API, its lease in an in-memory Redis and an in-memory holder. */
describe('reconnectDevice: the holder reconnects through the new proxy (an in-memory holder)', () => {
  const deviceId = 'px-1';
  let mh: MemoryHolder;
  let redis: MemoryRedis;
  const reconnect = () => reconnectDevice({ redis: redis.client, commands: mh.commands as never }, deviceId);

  beforeEach(() => {
    mh = new MemoryHolder();
    redis = new MemoryRedis();
  });

  it('When nobody holds the device’s lease, then not-connected and nothing is asked', async () => {
    expect(await reconnect()).to.equal('not-connected');
    expect(mh.asked).to.deep.equal([]);
  });

  it('When its holder answers, then reconnecting; it is asked without a session check, for a few seconds', async () => {
    redis.values.set(keys.lease(deviceId), 'owner');
    const heard = mh.fakeSender(deviceId, () => ({ ok: true }));
    expect(await reconnect()).to.equal('reconnecting');
    expect(heard.map(said)).to.deep.equal([{ type: 'proxy-changed', deviceId }]);
    expect(mh.asked[0]!.waitSeconds).to.equal(5);
  });

  it('When no sender listens, then not-connected; when the holder is silent or fails, unknown', async () => {
    redis.values.set(keys.lease(deviceId), 'owner');
    expect(await reconnect()).to.equal('not-connected');
    const answers: (DeviceCommandReply | undefined)[] = [undefined, { ok: false, error: 'x' }];
    mh.fakeSender(deviceId, () => answers.shift());
    expect(await reconnect()).to.equal('unknown');
    expect(await reconnect()).to.equal('unknown');
  });
});
