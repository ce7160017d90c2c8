import { expect } from 'chai';
import type { DeviceEngine } from '@mgw/contracts';
import { EngineCache } from './engine-cache.js';

describe('EngineCache: a device engine known without a round trip', () => {
  let reads: string[];
  let engines: Record<string, DeviceEngine>;
  const store = {
    engineOf: async (deviceId: string) => {
      reads.push(deviceId);
      return engines[deviceId] ?? 'linked';
    },
  };
  beforeEach(() => {
    reads = [];
    engines = { c1: 'cloud' };
  });

  it('When a device was read in the last ttlMs, then its engine comes back as a value, not a promise, and the store is not asked again', async () => {
    const cache = new EngineCache(store, { ttlMs: 1000, maxEntries: 10 });
    expect(await cache.engineOf('d1', 0)).to.equal('linked');
    expect(await cache.engineOf('c1', 0)).to.equal('cloud');
    expect(cache.engineOf('d1', 999)).to.equal('linked');
    expect(cache.engineOf('c1', 500)).to.equal('cloud');
    expect(reads).to.deep.equal(['d1', 'c1']);
  });

  it('When ttlMs passed or the device was dropped, then the store is asked again and a change is seen', async () => {
    const cache = new EngineCache(store, { ttlMs: 1000, maxEntries: 10 });
    await cache.engineOf('d1', 0);
    engines.d1 = 'cloud';
    expect(await cache.engineOf('d1', 1000)).to.equal('cloud');
    engines.d1 = 'linked';
    cache.drop('d1');
    expect(await cache.engineOf('d1', 1001)).to.equal('linked');
    expect(reads).to.deep.equal(['d1', 'd1', 'd1']);
  });

  it('When more devices are asked for than maxEntries, then the map is emptied rather than grown', async () => {
    const cache = new EngineCache(store, { ttlMs: 60_000, maxEntries: 2 });
    for (const id of ['a', 'b', 'c']) await cache.engineOf(id, 0);
    // `c` emptied the full map (a and b gone) and was kept.
    expect(cache.engineOf('c', 1)).to.equal('linked');
    const again = cache.engineOf('a', 1);
    expect(again).to.be.instanceOf(Promise);
    await again;
    expect(reads).to.deep.equal(['a', 'b', 'c', 'a']);
  });
});
