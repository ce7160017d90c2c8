import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { PoolStore, markLinked } from '@mgw/store';
import { poolDevices } from '../pool-devices.js';
import { call, freshDeviceId, markConnected, startApi, type TestApi } from '../../../../test/helpers/api.js';

interface PoolBatch {
  batchId: string;
  devices: { deviceId: string; total: number }[];
}

/**
 * A pooled list while some devices of the pool have no NCT salt yet (their first contacts would go
 * without a token, which WhatsApp may refuse with 463): the devices that hold one take the list;
 * when none holds one, the spread is as before.
 */
describe('Pools: a device without the NCT salt takes no share while another has one (API alone)', () => {
  let t: TestApi;
  let devices: string[];
  let token: string;
  before(async () => (t = await startApi({ pools: { moveIntervalMs: 60_000, minHealth: 50 } })));
  beforeEach(async () => {
    devices = [freshDeviceId(), freshDeviceId(), freshDeviceId()];
    for (const d of devices) {
      await markConnected(t.redis, d);
      await markLinked(t.redis, d);
    }
    const poolId = `p${Math.random().toString(36).slice(2, 9)}`;
    expect(await new PoolStore(t.redis).create({ id: poolId, name: 'salt pool', devices })).to.not.equal(
      'exists',
    );
    ({ value: token } = await t.services.tokens.create({ name: 'pool', poolId }));
  });
  afterEach(async () => {
    for (const d of devices) {
      await t.services.acceptor.queue(d).obliterate({ force: true });
      await t.redis.del(keys.authKeys(d, 'nct-salt'));
    }
  });
  after(async () => t.close());

  const numbers = (n: number, from: number) => Array.from({ length: n }, (_, i) => String(from + i));
  const spreadOf = async (to: string[]) => {
    const res = await call(`${t.api}/send`, { token, json: { to, text: 'new contacts' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const b = (await call(`${t.api}/batches/${String(res.body.messageId)}`, { token })).body
      .data as PoolBatch;
    return b.devices.map((d) => [d.deviceId, d.total]).sort();
  };

  it('When one device of the pool holds the account’s NCT salt and the others not yet, then a list to new contacts goes to it alone, and the pool shows the others out of the spread (no_nct_salt)', async () => {
    // The salt is sealed in the device's auth keys; only whether it is there is read.
    await t.redis.hset(keys.authKeys(devices[1]!, 'nct-salt'), 'salt', 'sealed');
    expect(await spreadOf(numbers(9, 15554100000))).to.deep.equal([[devices[1], 9]]);
    const states = await poolDevices(t.redis, devices, t.services.config.sendPolicy, 50);
    expect(states.map((d) => d.dropped)).to.deep.equal(['no_nct_salt', undefined, 'no_nct_salt']);
  });

  it('When no device of the pool holds a salt, then the list is spread over all of them as before', async () => {
    expect((await spreadOf(numbers(9, 15554200000))).map(([, n]) => n)).to.deep.equal([3, 3, 3]);
  });
});
