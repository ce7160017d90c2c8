import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '@mgw/common';
import { MemoryRedis } from '../test-support.js';
import { controlDeviceBatch } from './control-batch.js';

/**
 * A device's batch control is one script of libs/store (`controlBatch`, then the queue's sweep):
 * its outcomes (pause, resume, cancel, their refusals and repeats) are proved against Redis in the
 * full suite (e2e/batches.test.ts, libs/store/test/batch-control.test.ts). What it
 * decides before the script runs is proved here.
 */
describe('controlDeviceBatch: what is refused before the script runs (in-memory Redis)', () => {
  const logger = createLogger({ level: 'silent', service: 'control-batch-test', stream: new PassThrough() });

  it('When the batch id is too long to be one, then not_found for every action, and Redis is not asked', async () => {
    const redis = new MemoryRedis();
    const s = { redis: redis.client } as Parameters<typeof controlDeviceBatch>[0];
    for (const action of ['pause', 'resume', 'cancel'] as const)
      expect(await controlDeviceBatch(s, 'd-1', 'x'.repeat(129), action, logger), action).to.deep.equal({
        kind: 'refused',
        reason: 'not_found',
      });
    expect(redis.commands).to.deep.equal([]);
  });
});
