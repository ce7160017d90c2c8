import { expect } from 'chai';
import { keys, type BatchRecord, type MessageRecord } from '@mgw/contracts';
import type { MemoryRedis } from '../test-support.js';
import { batch, batchFixture } from './batch-fixture.js';
import { listDeviceBatches, type DeviceBatchesDeps } from './list-device-batches.js';

/** The Campaigns page's list without an API: the batch store faked, held messages and records in memory. */
describe("listDeviceBatches: a device's batches as the dashboard lists them (in-memory stores)", () => {
  const deviceId = 'db-1';
  let redis: MemoryRedis;
  let batches: BatchRecord[];
  let records: Map<string, Partial<MessageRecord>>;
  let d: DeviceBatchesDeps;

  beforeEach(() => {
    ({ redis, batches, records, d } = batchFixture());
  });

  it('When a batch has held messages, then the reasons a sample of them wait, each with its earliest end, soonest first', async () => {
    batches.push(batch('b-1', 3, 3), batch('b-2', 2));
    redis.addMembers(keys.batchHeld(deviceId, 'b-1'), 'm-1', 'm-2', 'm-3');
    records.set('m-1', { held: { reason: 'daily_cap', until: '2026-01-02T00:00:00.000Z' } } as never);
    records.set('m-2', { held: { reason: 'daily_cap', until: '2026-01-01T12:00:00.000Z' } } as never);
    records.set('m-3', { held: { reason: 'quiet_hours', until: '2026-01-01T08:00:00.000Z' } } as never);
    const page = await listDeviceBatches(d, deviceId, 10, undefined);
    expect(page.batches[0]!.heldReasons).to.deep.equal([
      { reason: 'quiet_hours', until: '2026-01-01T08:00:00.000Z' },
      { reason: 'daily_cap', until: '2026-01-01T12:00:00.000Z' },
    ]);
    expect(page.batches[1]).to.deep.equal(batch('b-2', 2));
  });

  it('When a batch of one is a status or a channel post, then it is labelled so; any other is not', async () => {
    batches.push(batch('s-1', 1), batch('c-1', 1), batch('m-1', 1));
    redis.hash(keys.statusRecord(deviceId, 's-1'), { audience: 'sealed' });
    records.set('c-1', { to: '120363000000000001@newsletter' });
    records.set('m-1', { to: '15550001111' });
    const page = await listDeviceBatches(d, deviceId, 10, undefined);
    expect(page.batches.map((b) => b.broadcast)).to.deep.equal(['status', 'channel', undefined]);
  });
});
