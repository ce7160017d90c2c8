import { expect } from 'chai';
import { createMetrics, type EventType } from '@mgw/contracts';
import type { EventLogQuery } from '@mgw/store';
import { MemoryLog, MemoryOutput, config, quietLogger, settle } from './event-fixture.js';
import { EventStream } from './event-stream.js';
import { SharedLogReads } from './shared-log-reads.js';

describe('EventStream: a stream of one device or all, its cursor, filter and cuts (an in-memory log and output)', () => {
  const logger = quietLogger();
  let log: MemoryLog;
  beforeEach(() => {
    log = new MemoryLog();
  });

  const streamOf = (output: MemoryOutput, types?: EventType[], onEnd = () => {}) =>
    new EventStream(
      { reads: new SharedLogReads(log), logger, metrics: createMetrics(), config },
      output,
      types,
      onEnd,
    );

  it('When a stream of one device begins, then it sends the events after its cursor in order, then each event appended once it is woken', async () => {
    const [, second] = [log.append('d-1'), log.append('d-1')];
    const output = new MemoryOutput();
    const stream = streamOf(output);
    stream.startOne('d-1', '1-0', true);
    stream.begin();
    await settle();
    expect(output.began).to.equal(true);
    expect(output.written).to.deep.equal([['d-1', [second.id]]]);
    const third = log.append('d-1');
    stream.wake('d-1');
    await settle();
    expect(output.written.at(-1)).to.deep.equal(['d-1', [third.id]]);
  });

  it('When a filter is given, then only its types are sent; a resumed cursor the log lost is announced as truncated', async () => {
    log.append('d-1', 'session.status');
    const sent = log.append('d-1', 'message.sent');
    const output = new MemoryOutput();
    const stream = streamOf(output, ['message.sent']);
    log.read = (async (d: string, q: EventLogQuery) => ({
      ...(await MemoryLog.prototype.read.call(log, d, q)),
      truncated: true,
    })) as never;
    stream.startOne('d-1', '0-0', true);
    stream.begin();
    await settle();
    expect(output.written[0]).to.deep.equal(['d-1', ['truncated after 0-0']]);
    expect(output.written.flatMap(([, ids]) => ids)).to.include(sent.id);
  });

  it('When a stream of every device starts, then a device is read from the start on, including one woken before the start was known', async () => {
    const output = new MemoryOutput();
    const stream = streamOf(output);
    log.append('d-early');
    const early = log.append('d-early');
    stream.wake('d-early');
    stream.startEvery('1-0');
    stream.begin();
    await settle();
    expect(output.written).to.deep.equal([['d-early', [early.id]]]);
  });

  it("When a stream of every device follows a workspace's devices only, then another's events are never read nor sent, and a device changing hands is followed from then on", async () => {
    const owners = new Map([
      ['mine', 'acme'],
      ['theirs', 'globex'],
    ]);
    const output = new MemoryOutput();
    const stream = new EventStream(
      { reads: new SharedLogReads(log), logger, metrics: createMetrics(), config },
      output,
      undefined,
      () => {},
      async (deviceId) => owners.get(deviceId) === 'acme',
    );
    stream.startEvery('0-0');
    stream.begin();
    await settle();
    const theirs = log.append('theirs');
    const mine = log.append('mine');
    stream.wake('theirs');
    stream.wake('mine');
    await settle();
    expect(output.written).to.deep.equal([['mine', [mine.id]]]);
    expect(log.reads, "the other's log is not read").to.equal(1);
    owners.set('theirs', 'acme');
    const now = log.append('theirs');
    stream.wake('theirs');
    await settle();
    expect(output.written.at(-1)).to.deep.equal(['theirs', [theirs.id, now.id]]);
  });

  it('When the reader does not take what waits in its socket within the stall time, then the stream is cut as slow_reader and ends', async () => {
    log.append('d-1');
    const output = new MemoryOutput();
    output.pending = 1000;
    let ended = 0;
    const stream = streamOf(output, undefined, () => ended++);
    stream.startOne('d-1', '0-0', false);
    stream.begin();
    await new Promise((resolve) => setTimeout(resolve, config.stallMs + 30));
    expect(output.ended).to.equal('slow_reader');
    expect(ended).to.equal(1);
  });

  it('When the client went before the stream began, then nothing begins; a read that fails cuts the stream as error', async () => {
    const gone = new MemoryOutput();
    gone.isGone = true;
    let ended = 0;
    const stream = streamOf(gone, undefined, () => ended++);
    stream.startOne('d-1', '0-0', false);
    stream.begin();
    expect(gone.began).to.equal(false);
    expect(ended).to.equal(1);

    log.read = async () => {
      throw new Error('the log cannot be read');
    };
    const output = new MemoryOutput();
    const failing = streamOf(output);
    failing.startOne('d-1', '0-0', false);
    failing.begin();
    await settle();
    expect(output.ended).to.equal('error');
  });
});
