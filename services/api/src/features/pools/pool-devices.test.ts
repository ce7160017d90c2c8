import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { config, poolId, poolState } from './pool-fixture.js';
import { poolDevices, poolMembers, spread, type PoolDevice } from './pool-devices.js';

/**
 * A pool's devices without an API or Redis: the pool's definition and its devices' state in an
 * in-memory Redis (as the API and the senders write them).
 */
describe("poolMembers, poolDevices, spread: a pool's devices and each one's share (in-memory Redis)", () => {
  let redis: MemoryRedis;
  let device: ReturnType<typeof poolState>['device'];
  let define: ReturnType<typeof poolState>['define'];

  beforeEach(() => {
    redis = new MemoryRedis();
    ({ device, define } = poolState(redis));
  });

  it('When a pool is read, then its members as defined; an unknown pool is undefined', async () => {
    define('d-1', 'd-2');
    expect(await poolMembers(redis.client, poolId)).to.deep.equal(['d-1', 'd-2']);
    expect(await poolMembers(redis.client, 'pool-none')).to.equal(undefined);
  });

  it('When the devices are looked at, then a linked one takes its share by what it may still send; one not linked drops out', async () => {
    device('d-1');
    device('d-2', 'connected', 400);
    device('d-3', 'disconnected');
    const devices = await poolDevices(redis.client, ['d-1', 'd-2', 'd-3'], config.sendPolicy);
    expect(devices.map((d) => [d.deviceId, d.linked, d.dropped])).to.deep.equal([
      ['d-1', true, undefined],
      ['d-2', true, undefined],
      ['d-3', false, 'not_linked'],
    ]);
    expect(devices[0]!.health).to.equal(100);
    expect(devices[0]!.weight, 'more left to send: a bigger share').to.be.greaterThan(devices[1]!.weight);
    expect(devices[2]!.weight).to.equal(0);
  });

  it('When one device holds the NCT salt, then a linked one without drops out (no_nct_salt) and a Cloud API device stays in the spread', async () => {
    device('d-salted');
    device('d-linked');
    device('d-cloud');
    await redis.client.hset(keys.authKeys('d-salted', 'nct-salt'), 'salt', 'sealed');
    // A cloud device's configuration (sealed; only whether it is there is read).
    await redis.client.set(keys.cloudDevice('d-cloud'), 'sealed');
    const devices = await poolDevices(redis.client, ['d-salted', 'd-linked', 'd-cloud'], config.sendPolicy);
    expect(devices.map((d) => [d.deviceId, d.dropped])).to.deep.equal([
      ['d-salted', undefined],
      ['d-linked', 'no_nct_salt'],
      ['d-cloud', undefined],
    ]);
    // With no linked device salted, none drops out: the cloud device holds no salt to go by.
    const unsalted = await poolDevices(redis.client, ['d-linked', 'd-cloud'], config.sendPolicy);
    expect(unsalted.map((d) => d.dropped)).to.deep.equal([undefined, undefined]);
  });

  it('When messages are spread, then each goes to the device furthest below its fair part, counting what each got', () => {
    const d = (deviceId: string, weight: number) =>
      ({ deviceId, weight, linked: true, health: 100 }) as PoolDevice;
    // 2 : 1 by weight; a tie goes to the device listed first.
    expect(spread([d('a', 2), d('b', 1)], new Map(), 6)).to.deep.equal(['a', 'a', 'b', 'a', 'a', 'b']);
    expect(spread([d('a', 1), d('b', 1)], new Map([['a', 3]]), 3)).to.deep.equal(['b', 'b', 'b']);
    expect(spread([d('a', 1)], new Map(), 0)).to.deep.equal([]);
  });
});
