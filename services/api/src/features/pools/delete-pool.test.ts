import { expect } from 'chai';
import type { PoolRecord } from '@mgw/store';
import { pool, poolStores } from './pool-fixture.js';
import { deletePool, tokensOfPool } from './delete-pool.js';

/** The admin API's pools without Redis: the pool and token stores, and the devices' reads, faked. */
describe('deletePool: a pool deleted unless API tokens send through it (in-memory stores)', () => {
  let pools: Map<string, PoolRecord>;
  let tokens: { id: string; name: string; poolId?: string }[];
  const stores = () => poolStores(pools, tokens);

  beforeEach(() => {
    pools = new Map([['p-1', pool('p-1', ['d-1'])]]);
    tokens = [{ id: 'tok_1', name: 'shop' }];
  });

  it('When a pool has API tokens sending through it, then it is in_use (naming them) and kept; without, deleted; an unknown one not_found', async () => {
    tokens.push({ id: 'tok_2', name: 'campaigns', poolId: 'p-1' });
    const d = stores() as unknown as Parameters<typeof deletePool>[0];
    expect(await tokensOfPool(d.tokens, 'p-1')).to.deep.equal([{ id: 'tok_2', name: 'campaigns' }]);
    expect(await deletePool(d, 'p-1')).to.deep.equal({
      kind: 'in_use',
      tokens: [{ id: 'tok_2', name: 'campaigns' }],
    });
    expect(pools.has('p-1')).to.equal(true);
    tokens.pop();
    expect(await deletePool(d, 'p-1')).to.deep.equal({ kind: 'deleted' });
    expect(await deletePool(d, 'p-1')).to.deep.equal({ kind: 'not_found' });
  });
});
