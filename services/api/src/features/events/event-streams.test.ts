import { expect } from 'chai';
import { createMetrics } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { MemoryLog, MemoryOutput, config, quietLogger, settle } from './event-fixture.js';
import { EventStreams } from './event-streams.js';

describe('EventStreams: the streams of a process, their share per key and their close (an in-memory log and Redis)', () => {
  const logger = quietLogger();
  let log: MemoryLog;
  let redis: MemoryRedis;
  let streams: EventStreams;
  beforeEach(() => {
    log = new MemoryLog();
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
