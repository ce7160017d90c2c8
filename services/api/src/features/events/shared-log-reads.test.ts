import { expect } from 'chai';
import { MemoryLog } from './event-fixture.js';
import { SharedLogReads } from './shared-log-reads.js';

describe("SharedLogReads: one read of a device's log shared by the streams at its cursor (an in-memory log)", () => {
  let log: MemoryLog;
  beforeEach(() => {
    log = new MemoryLog();
  });

  it('When many streams at the same cursor read at once, then the log is read once and each gets the same page', async () => {
    log.append('d-1');
    const reads = new SharedLogReads(log);
    const pages = await Promise.all(
      Array.from({ length: 50 }, () => reads.read('d-1', { after: '0-0', limit: 100 })),
    );
    expect(log.reads).to.equal(1);
    expect(pages[49]).to.equal(pages[0]);
    expect(reads.devices()).to.deep.equal(['d-1']);
  });

  it('When the log grew (or may have) while a read is under way, then a later read does not join it; another cursor or filter never does', async () => {
    const reads = new SharedLogReads(log);
    const q = { after: '0-0', limit: 100 };
    const early = reads.read('d-1', q);
    reads.grew('d-1');
    const late = reads.read('d-1', q);
    expect(late).not.to.equal(early);
    reads.mayHaveGrown();
    expect(reads.read('d-1', q)).not.to.equal(late);
    expect(reads.read('d-1', { ...q, types: ['message.sent'] })).not.to.equal(reads.read('d-1', q));
    reads.forget('d-1');
    expect(reads.devices()).to.deep.equal([]);
    await Promise.all([early, late]);
  });
});
