import { expect } from 'chai';
import type { PoolBatchRecord } from '@mgw/contracts';
import { poolId, quietLogger } from './pool-fixture.js';
import { controlPoolBatch } from './pool-control.js';

/**
 * A pooled batch's control without Redis: the pool's batch records faked. What runs a store's
 * script (a device part's control) is in the full suite (the pools' and batches' e2e tests).
 */
describe("controlPoolBatch: a pooled batch's control, its refusals (faked pool batch records)", () => {
  const logger = quietLogger();
  let state: PoolBatchRecord['state'] | undefined;
  let controlled: string[];
  const deps = () =>
    ({
      poolBatches: {
        get: async () => (state ? ({ batchId: 'b-1', state } as PoolBatchRecord) : undefined),
        control: async (_p: string, _b: string, action: string) => void controlled.push(action),
        meta: async () => ({ devices: [] }),
      },
    }) as unknown as Parameters<typeof controlPoolBatch>[0];
  beforeEach(() => {
    controlled = [];
  });

  it('When the pooled batch is unknown, completed, or cancelled (but for a cancel), then refused and its state is not touched', async () => {
    state = undefined;
    expect(await controlPoolBatch(deps(), poolId, 'b-1', 'pause', logger)).to.deep.equal({
      kind: 'refused',
      reason: 'not_found',
    });
    expect(await controlPoolBatch(deps(), poolId, 'x'.repeat(129), 'pause', logger)).to.deep.equal({
      kind: 'refused',
      reason: 'not_found',
    });
    state = 'completed';
    expect(await controlPoolBatch(deps(), poolId, 'b-1', 'cancel', logger)).to.deep.equal({
      kind: 'refused',
      reason: 'completed',
    });
    state = 'cancelled';
    expect(await controlPoolBatch(deps(), poolId, 'b-1', 'resume', logger)).to.deep.equal({
      kind: 'refused',
      reason: 'cancelled',
    });
    expect(controlled).to.deep.equal([]);
  });

  it("When it is controlled, then the pool's state changes and the batch is answered as it reads after (no device part left here)", async () => {
    state = 'active' as PoolBatchRecord['state'];
    expect(await controlPoolBatch(deps(), poolId, 'b-1', 'pause', logger)).to.deep.equal({
      kind: 'done',
      batch: { batchId: 'b-1', state },
    });
    state = 'cancelled';
    expect(
      (await controlPoolBatch(deps(), poolId, 'b-1', 'cancel', logger)).kind,
      'a repeated cancel',
    ).to.equal('done');
    expect(controlled).to.deep.equal(['pause', 'cancel']);
  });
});
