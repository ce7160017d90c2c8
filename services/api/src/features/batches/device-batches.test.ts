import { expect } from 'chai';
import { keys, type BatchRecord, type MessageRecord } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { listDeviceBatches, type DeviceBatchesDeps } from './list-device-batches.js';
import { showDeviceBatch } from './show-device-batch.js';

/** The Campaigns page's reads without an API: the batch store faked, held messages and records in memory. */
describe("A device's batches as the dashboard shows them: listDeviceBatches, showDeviceBatch (in-memory stores)", () => {
  const deviceId = 'db-1';
  let redis: MemoryRedis;
  let batches: BatchRecord[];
  let records: Map<string, Partial<MessageRecord>>;
  let d: DeviceBatchesDeps;
  const batch = (batchId: string, total: number, held = 0) =>
    ({ batchId, total, counts: { held } }) as unknown as BatchRecord;

  beforeEach(() => {
    redis = new MemoryRedis();
    batches = [];
    records = new Map();
    d = {
      redis: redis.client,
      messages: { get: async (_d: string, id: string) => records.get(id) },
      batches: {
        list: async (_d: string, limit: number) => ({ batches: batches.slice(0, limit) }),
        get: async (_d: string, id: string) => batches.find((b) => b.batchId === id),
      },
    } as unknown as DeviceBatchesDeps;
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
