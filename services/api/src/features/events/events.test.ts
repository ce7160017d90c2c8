import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '@mgw/common';
import { createMetrics, keys, type EventType } from '@mgw/contracts';
import type { EventLogPage, EventLogQuery, LoggedEvent } from '@mgw/store';
import { MemoryRedis } from '../test-support.js';
import { EventLogTrimmer } from './event-log-trimmer.js';
import { traceStreamed } from './event-spans.js';
import { EventStream, type CutReason, type StreamOutput } from './event-stream.js';
import { EventStreams } from './event-streams.js';
import { SharedLogReads } from './shared-log-reads.js';

/** Devices' event logs in memory, read as EventLog reads them (after a cursor, a page at a time, by type). */
class MemoryLog {
  readonly logs = new Map<string, LoggedEvent[]>();
  reads = 0;
  /** A read that waits until the test lets it answer (none: answers at once). */
  gate?: Promise<void>;
  private seq = 0;

  append(deviceId: string, type: EventType = 'session.status', data: unknown = {}): LoggedEvent {
    const cursor = `${++this.seq}-0`;
    const event = { cursor, id: `ev-${this.seq}`, type, timestamp: new Date().toISOString(), data };
    this.logs.set(deviceId, [...(this.logs.get(deviceId) ?? []), event]);
    return event;
  }
  async read(deviceId: string, q: EventLogQuery): Promise<EventLogPage> {
    this.reads++;
    await this.gate;
    const after = Number((q.after ?? '0-0').split('-')[0]);
    const newer = (this.logs.get(deviceId) ?? []).filter((e) => Number(e.cursor.split('-')[0]) > after);
    const looked = newer.slice(0, q.limit);
    const events = looked.filter((e) => !q.types || q.types.includes(e.type));
    return { events, nextCursor: looked.at(-1)?.cursor ?? null };
  }
  async last(deviceId: string): Promise<string | undefined> {
    return this.logs.get(deviceId)?.at(-1)?.cursor;
  }
}

/** A stream's output in memory: what it was sent, and its socket as full or gone as the test says. */
class MemoryOutput implements StreamOutput {
  readonly transport = 'sse' as const;
  readonly emitter = new EventEmitter();
  readonly written: [string, string[]][] = [];
  began = false;
  ended?: CutReason;
  isGone = false;
  pending = 0;
  begin() {
    this.began = true;
  }
  events(deviceId: string, events: readonly LoggedEvent[]) {
    this.written.push([deviceId, events.map((e) => e.id)]);
  }
  truncated(deviceId: string, after: string) {
    this.written.push([deviceId, [`truncated after ${after}`]]);
  }
  keepAlive() {
    return !this.isGone;
  }
  buffered() {
    return this.pending;
  }
  full() {
    return this.pending > 0;
  }
  end(reason: CutReason) {
    this.ended = reason;
  }
  gone() {
    return this.isGone;
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('Events: shared log reads, a stream, the streams of a process, the log trimmer (in-memory log and Redis)', () => {
  const logger = createLogger({ level: 'silent', service: 'events-test', stream: new PassThrough() });
  const config = { perToken: 2, keepAliveMs: 60_000, maxBufferedBytes: 100, stallMs: 30 };
  let log: MemoryLog;
  beforeEach(() => {
    log = new MemoryLog();
  });

  describe('SharedLogReads', () => {
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

  describe('EventStream', () => {
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

  describe('EventStreams', () => {
    let redis: MemoryRedis;
    let streams: EventStreams;
    beforeEach(() => {
      redis = new MemoryRedis();
      streams = new EventStreams({
        eventLog: log,
        subscriber: redis.client,
        redis: redis.client,
        logger,
        metrics: createMetrics(),
        config,
      });
    });
    afterEach(() => streams.close());

    it("When a stream of one device opens without a cursor, then it starts after the device's newest event: only what comes after reaches it", async () => {
      log.append('d-1');
      const output = new MemoryOutput();
      await streams.open(output, { key: 'token-1', devices: { one: 'd-1' } });
      await settle();
      expect(output.began).to.equal(true);
      expect(output.written).to.deep.equal([]);
    });

    it('When a key holds its share of streams, then it may open no more until one ends; closing cuts every stream as shutdown', async () => {
      const outputs = [new MemoryOutput(), new MemoryOutput()];
      for (const output of outputs) await streams.open(output, { key: 'token-1', devices: 'all' });
      expect(streams.canOpen('token-1')).to.equal(false);
      expect(streams.canOpen('token-2')).to.equal(true);
      outputs[0]!.emitter.emit('close');
      expect(streams.canOpen('token-1')).to.equal(true);
      await streams.close();
      expect(outputs[1]!.ended).to.equal('shutdown');
      expect(streams.canOpen('token-2'), 'closed: none').to.equal(false);
    });

    it("When the stream's cursor cannot be taken, then the open rejects and nothing is counted or begun", async () => {
      log.last = async () => {
        throw new Error('Redis went away');
      };
      const output = new MemoryOutput();
      let thrown: unknown;
      await streams
        .open(output, { key: 'token-1', devices: { one: 'd-1' } })
        .catch((err: unknown) => (thrown = err));
      expect((thrown as Error).message).to.equal('Redis went away');
      expect(output.began).to.equal(false);
      expect(streams.canOpen('token-1')).to.equal(true);
    });
  });

  describe('traceStreamed', () => {
    it('When tracing is off, then the events are not even looked at', () => {
      const untouchable = new Proxy([], {
        get: () => {
          throw new Error('looked at');
        },
      }) as LoggedEvent[];
      expect(() => traceStreamed('d-1', untouchable, 'sse')).not.to.throw();
    });
  });

  describe('EventLogTrimmer', () => {
    it('When it walks the devices, then each linked or webhook device is trimmed once, whichever sets name it; stopped, it schedules no round', async () => {
      const redis = new MemoryRedis();
      redis.addMembers(keys.linkedDevices(), 'd-1', 'd-2');
      redis.addMembers(keys.webhookDevices(), 'd-2', 'd-3');
      const trimmed: string[][] = [];
      const trimmer = new EventLogTrimmer({
        redis: redis.client,
        eventLog: { trim: async (devices: string[]) => (trimmed.push(devices), devices.length * 10) },
        logger,
      });
      // One round's walk, as the interval's lock runs it (the lock is a script: the full suite's).
      const walk = (trimmer as unknown as { trim(lost: AbortSignal): Promise<number> }).trim.bind(trimmer);
      expect(await walk(new AbortController().signal)).to.equal(30);
      expect(trimmed).to.deep.equal([['d-1', 'd-2'], ['d-3']]);
      trimmer.start();
      await trimmer.stop();
      expect(redis.commands).to.deep.equal(['sscan', 'sscan']);
    });
  });
});
