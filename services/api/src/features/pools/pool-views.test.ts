import { expect } from 'chai';
import type { DeviceHealth, PoolRecord, SendingView } from '@mgw/store';
import { pool, poolStores } from './pool-fixture.js';
import { poolViews, type PoolsDeps } from './pool-views.js';

/** The admin API's pools without Redis: the pool and token stores, and the devices' reads, faked. */
describe('poolViews: the pools as the admin shows them, each device with its state (in-memory stores)', () => {
  let pools: Map<string, PoolRecord>;
  let tokens: { id: string; name: string; poolId?: string }[];
  const stores = () => poolStores(pools, tokens);

  beforeEach(() => {
    pools = new Map([['p-1', pool('p-1', ['d-1'])]]);
    tokens = [{ id: 'tok_1', name: 'shop' }];
  });

  it('When the pools are viewed, then each device once with its status, its place in the spread and, linked or connecting, its health', async () => {
    const read: string[][] = [];
    const d = {
      ...stores(),
      devices: {
        directory: {
          read: async (ids: string[]) => {
            read.push(ids);
            return ids.map((deviceId) => ({
              deviceId,
              status: deviceId === 'd-3' ? 'disconnected' : 'connected',
              linked: deviceId !== 'd-3',
            }));
          },
        },
        sending: async () => ({ sentToday: 1 }) as SendingView,
        health: async (deviceId: string) => ({ score: deviceId === 'd-2' ? 40 : 100 }) as DeviceHealth,
      },
      spread: async (ids: string[]) =>
        ids.map((deviceId) => ({ deviceId, ...(deviceId === 'd-2' ? { dropped: 'low_health' } : {}) })),
    } as unknown as PoolsDeps;
    const views = await poolViews(d, [pool('p-1', ['d-1', 'd-2']), pool('p-2', ['d-2', 'd-3'])]);
    expect(read).to.deep.equal([['d-1', 'd-2', 'd-3']]);
    expect(views.map((v) => v.deviceStates)).to.deep.equal([
      [
        { deviceId: 'd-1', status: 'connected', linked: true, spread: 'taking', healthScore: 100 },
        { deviceId: 'd-2', status: 'connected', linked: true, spread: 'low_health', healthScore: 40 },
      ],
      [
        { deviceId: 'd-2', status: 'connected', linked: true, spread: 'low_health', healthScore: 40 },
        { deviceId: 'd-3', status: 'disconnected', linked: false, spread: 'taking' },
      ],
    ]);
    expect(await poolViews(d, [])).to.deep.equal([]);
  });
});
