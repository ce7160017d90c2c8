import { expect } from 'chai';
import { keys, type MessageRecord } from '@mgw/contracts';
import { MemoryRedis, inboundRecord, sentRecord } from '../test-support.js';
import { devicesFixture, type DevicesFixture } from './device-fixture.js';
import { deviceMessages, type DevicesDeps } from './devices.js';
import { batchCounts, recentMessages } from './recent-messages.js';

/**
 * The admin Devices and Messages pages' reads without an API: the session and pairing records in an
 * in-memory Redis (as the connection service and the senders write them), the message stores and
 * the send queue faked.
 */
describe("recentMessages: a device's recent messages, the queue's and the index's merged (in-memory Redis)", () => {
  let redis: MemoryRedis;
  let records: DevicesFixture['records'];
  let jobs: DevicesFixture['jobs'];
  let indexIds: string[];
  let d: DevicesDeps;

  beforeEach(() => {
    ({ redis, records, jobs, indexIds, d } = devicesFixture());
  });

  it('When the recent messages are read, then the queue’s and the inbound ones of the index, merged newest first, with their batches’ counts', async () => {
    const old = sentRecord('d-1', {
      createdAt: '2026-01-01T10:00:00.000Z',
      batchId: 'b-1',
      status: 'sent',
    });
    const newer = sentRecord('d-1', {
      createdAt: '2026-01-01T12:00:00.000Z',
      batchId: 'b-1',
      status: 'failed',
    });
    const inbound = inboundRecord('d-1', { createdAt: '2026-01-01T11:00:00.000Z' } as never);
    for (const r of [old, newer, inbound]) records.set(r.messageId, r);
    jobs.push(
      { id: '1', data: { messageId: old.messageId, enqueuedAt: 1 } },
      { id: '2', data: { messageId: newer.messageId, enqueuedAt: 2 } },
    );
    indexIds.push(inbound.messageId, old.messageId);
    redis.hash(keys.message('d-1', inbound.messageId), { direction: 'inbound' });
    const recent = await deviceMessages(d, 'd-1', 10, 'all');
    expect(recent.messages.map((m) => m.messageId)).to.deep.equal([
      newer.messageId,
      inbound.messageId,
      old.messageId,
    ]);
    expect(recent.batches).to.have.length(1);
    const outboundOnly = await recentMessages(
      { ...d, queue: d.queueOf('d-1') } as never,
      'd-1',
      10,
      'outbound',
    );
    expect(outboundOnly.messages.map((m) => m.messageId)).to.deep.equal([newer.messageId, old.messageId]);
    expect(batchCounts([old, newer] as MessageRecord[])[0]).to.deep.include({ batchId: 'b-1' });
  });
});
