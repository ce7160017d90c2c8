import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { DeleteQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createLogger } from '@mgw/common';
import { startSqsServer, waitFor, type SqsServerHandle } from '@mgw/testing';
import { SqsTransport } from '../../src/brokers/sqs.js';
import type { BrokerMessage } from '../../src/brokers/transport.js';
import { SqsDenyProxy } from './sqs-deny-proxy.js';
import { createQueue, sqsClient, SqsReader } from './sqs-reader.js';

/**
 * The SQS transport alone (sqs.ts) against fauxqs (`libs/testing` startSqsServer), its requests
 * through `SqsDenyProxy`: fauxqs enforces no policy, so the proxy answers the calls a role may not
 * make with AWS's AccessDenied, as SQS does. What "connected" means: the queue answers
 * GetQueueAttributes.
 */
describe('notifier: the SQS transport (fauxqs behind a proxy that can deny calls as AWS does)', function () {
  this.timeout(60_000);
  let sqs: SqsServerHandle;
  let client: SQSClient;
  let proxy: SqsDenyProxy;
  const open: { transports: SqsTransport[]; readers: SqsReader[] } = { transports: [], readers: [] };
  const uid = () => Math.random().toString(36).slice(2, 8);

  before(async () => {
    sqs = await startSqsServer({ inMemory: true });
    client = sqsClient(sqs);
    proxy = await SqsDenyProxy.start(sqs.endpoint);
  });
  after(async () => {
    client?.destroy();
    await proxy?.close();
    await sqs?.stop();
  });
  afterEach(async () => {
    proxy.deny.clear();
    await Promise.all(open.transports.splice(0).map((t) => t.close()));
    await Promise.all(open.readers.splice(0).map((r) => r.close()));
  });

  /** A transport on the queue `name` through the proxy; its state changes and log lines recorded. */
  function transport(name: string, retryMs = 200) {
    const out = new PassThrough();
    const seen = { logs: '', states: [] as boolean[] };
    out.on('data', (b: Buffer) => (seen.logs += b.toString()));
    const t = new SqsTransport({
      queueUrl: sqs.queueUrl(name),
      region: sqs.region,
      endpoint: proxy.endpoint,
      credentials: sqs.credentials,
      reconnectMaxMs: retryMs,
      requestTimeoutMs: 2000,
      probeMs: 60_000,
      logger: createLogger({ level: 'debug', service: 'sqs-transport-test', stream: out }),
      onState: (up) => seen.states.push(up),
    });
    open.transports.push(t);
    let connections = 0;
    t.start(() => connections++);
    return { t, seen, connections: () => connections };
  }

  const message = (deviceId: string, seq: number): BrokerMessage => ({
    deviceId,
    id: `evt-${uid()}-${seq}`,
    type: 'message.sent',
    timestamp: new Date().toISOString(),
    body: Buffer.from(JSON.stringify({ type: 'message.sent', timestamp: '', data: { deviceId, seq } })),
  });

  it('When the queue answers GetQueueAttributes but SendMessageBatch is denied (AccessDenied), then every publish rejects with it and the transport stays connected: no state change, no "unreachable" line, at most one check per EVENTS_BROKER_RETRY_MS; once allowed, the next publish goes through', async () => {
    const name = `deny-${uid()}.fifo`;
    const url = await createQueue(client, sqs, name);
    const { t, seen, connections } = transport(name);
    await waitFor(() => t.connected, { what: 'the queue answering' });
    const checksBefore = proxy.calls.get('GetQueueAttributes') ?? 0;
    proxy.deny.add('SendMessageBatch');
    // Publishes as fast as they fail (a relay with many devices waiting), until 20 were refused
    // and the queue was asked whether it still answers: events, not a 1.5 s window (a loaded host
    // fits fewer refusals in one).
    const checks = () => (proxy.calls.get('GetQueueAttributes') ?? 0) - checksBefore;
    const started = Date.now();
    let refused = 0;
    while (refused < 20 || checks() < 1) {
      expect(Date.now() - started, 'time for 20 refusals and a check').to.be.below(15_000); // quiet: 1470 ms
      const err = await t.publish([message('d1', refused)]).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err, 'a denied publish rejects').to.be.instanceOf(Error);
      expect(err!.name).to.equal('AccessDenied');
      expect(err!.message).to.include('not authorized to perform: sqs:sendmessage');
      refused++;
      expect(t.connected, `connected after ${refused} refusals`).to.equal(true);
    }
    const elapsed = Date.now() - started;
    expect(seen.states).to.deep.equal([true]);
    expect(connections()).to.equal(1);
    expect(t.problem).to.equal(undefined);
    expect(seen.logs).to.not.include('sqs unreachable');
    expect(seen.logs.match(/sqs reachable/g)).to.have.length(1);
    // The queue was asked whether it still answers, but not after every refusal: at most one
    // check per 200 ms of the time it took (load makes them rarer, never more frequent).
    expect(checks()).to.be.within(1, Math.ceil(elapsed / 200) + 2);
    expect(checks(), 'checks, against refusals').to.be.below(refused);

    proxy.deny.clear();
    const reader = new SqsReader(client, url);
    reader.start();
    open.readers.push(reader);
    const m = message('d1', 999);
    await t.publish([m]);
    await waitFor(() => reader.received.some((r) => r.id === m.id), { what: 'the message once allowed' });
  });

  it('When a publish fails because the queue was deleted, then the transport is down (its check fails too) and says why, until the queue is back', async () => {
    const name = `gone-${uid()}.fifo`;
    const url = await createQueue(client, sqs, name);
    const { t, seen } = transport(name);
    await waitFor(() => t.connected, { what: 'the queue answering' });
    await t.publish([message('d2', 1)]);
    await client.send(new DeleteQueueCommand({ QueueUrl: url }));
    const err = await t.publish([message('d2', 2)]).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).to.include('does not exist');
    await waitFor(() => !t.connected, { what: 'the transport down' });
    expect(seen.states).to.deep.equal([true, false]);
    expect(t.problem).to.equal('The specified queue does not exist.');
    expect(seen.logs).to.include('sqs unreachable; checking again');
    await createQueue(client, sqs, name);
    await waitFor(() => t.connected, { what: 'the queue answering again' });
    expect(t.problem).to.equal(undefined);
  });

  it('When the queue is missing from the start, or GetQueueAttributes is denied, then the transport is not connected and `problem` is SQS’s answer (scrubbed), cleared once the queue answers', async () => {
    const name = `late-${uid()}.fifo`;
    const { t } = transport(name);
    await waitFor(() => t.problem !== undefined, { what: 'the first check failed' });
    expect(t.connected).to.equal(false);
    expect(t.problem).to.equal('The specified queue does not exist.');
    proxy.deny.add('GetQueueAttributes');
    await createQueue(client, sqs, name);
    await waitFor(() => /not authorized to perform: sqs:getqueueattributes/.test(t.problem ?? ''), {
      what: 'the denial as the problem',
    });
    expect(t.connected).to.equal(false);
    proxy.deny.clear();
    await waitFor(() => t.connected, { what: 'the queue answering' });
    expect(t.problem).to.equal(undefined);
  });
});
