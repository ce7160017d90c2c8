import { expect } from 'chai';
import type { BatchRecord } from '@mgw/contracts';
import { batch, batchFixture } from './batch-fixture.js';
import type { DeviceBatchesDeps } from './list-device-batches.js';
import { showDeviceBatch } from './show-device-batch.js';

/** The Campaigns page's batch without an API: the batch store faked. */
describe("showDeviceBatch: one of a device's batches as the dashboard shows it (a faked batch store)", () => {
  const deviceId = 'db-1';
  let batches: BatchRecord[];
  let d: DeviceBatchesDeps;

  beforeEach(() => {
    ({ batches, d } = batchFixture());
  });

  it('When one batch is shown, then its record; an unknown or overlong id is not_found', async () => {
    batches.push(batch('b-1', 2));
    expect(await showDeviceBatch(d, deviceId, 'b-1')).to.deep.equal({
      kind: 'found',
      batch: batch('b-1', 2),
    });
    expect(await showDeviceBatch(d, deviceId, 'b-9')).to.deep.equal({ kind: 'not_found' });
    expect(await showDeviceBatch(d, deviceId, 'b'.repeat(129))).to.deep.equal({ kind: 'not_found' });
  });
});
