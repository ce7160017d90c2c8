import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  startRabbitMqServer,
  startSqsServer,
  useStack,
  waitFor,
  type BrokerServerHandle,
  type SqsServerHandle,
} from '@mgw/testing';
import { RabbitReader, type Received } from '../brokers/readers.js';
import { createQueue, sqsClient, SqsReader } from '../brokers/sqs-reader.js';

/**
 * Workspace isolation on the operator's brokers (docs/workspaces.md, issue 70 item 6), as the NATS
 * case of services/api/src/features/workspaces/e2e/workspace-isolation.test.ts: the whole stack
 * (the real client against the simulator) relaying to a real RabbitMQ and a real SQS-protocol
 * server. The broker is the operator's; what a workspace owns is its devices' routing keys and its
 * devices' opt-ins. So: a queue bound to A's device gets A's events and nothing of B's, each key
 * names its event's device; B cannot read or change A's opt-in (404, as for a device nobody has);
 * A's SQS opt-in is A's alone (B's events, not opted in, never reach SQS).
 */
describe('e2e: workspace isolation on the brokers — RabbitMQ routing keys, SQS opt-ins (real client, simulator, real RabbitMQ and SQS)', function () {
  this.timeout(240_000);
  const ADMIN = 'broker-isolation-admin-token-0123456789';
  const EXCHANGE = 'mgw.iso';
  const env: Record<string, string> = {
    ADMIN_API_TOKEN: ADMIN,
    ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    EVENTS_RABBITMQ_EXCHANGE: EXCHANGE,
  };
  let rabbit: BrokerServerHandle;
  let sqs: SqsServerHandle;
  let client: SQSClient;
  let queueUrl: string;
  const readers: { close(): Promise<void> }[] = [];
  // Registered before the stack's: the brokers run, and `env` names them, when the stack starts.
  before(async () => {
    [rabbit, sqs] = await Promise.all([startRabbitMqServer(), startSqsServer()]);
    client = sqsClient(sqs);
    queueUrl = await createQueue(client, sqs, 'mgw-iso.fifo');
    Object.assign(env, {
      EVENTS_RABBITMQ_URL: rabbit.url,
      EVENTS_SQS_QUEUE_URL: queueUrl,
      EVENTS_SQS_ENDPOINT: sqs.endpoint,
      AWS_ACCESS_KEY_ID: sqs.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: sqs.credentials.secretAccessKey,
    });
  });
  const stack = useStack({ allInOne: true, sim: { receiptDelayMs: 20, readDelayMs: 50 }, env });
  after(async () => {
    await Promise.all(readers.map((r) => r.close()));
    client?.destroy();
    await Promise.all([rabbit?.stop(), sqs?.stop()]);
  });

  /** A workspace made by the operator: its owner's workspace token, a device, a device token. */
  const tenant = async (prefix: string) => {
    const id = `${prefix}${randomBytes(3).toString('hex')}`;
    expect((await stack().adminApi(ADMIN, 'POST', '/workspaces', { id, name: id })).status).to.equal(201);
    const minted = await stack().adminApi<{ value: string }>(ADMIN, 'POST', `/workspaces/${id}/tokens`, {
      name: 'owner',
    });
    const owner = minted.body.value;
    const made = await stack().api<{ data: { deviceId: string } }>('POST', '/devices', undefined, owner);
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const device = made.body.data.deviceId;
    const token = await stack().api<{ data: { value: string } }>(
      'POST',
      '/tokens',
      { name: 'device', deviceId: device },
      owner,
    );
    return { owner, device, deviceToken: token.body.data.value };
  };

  it("When A's device opts in to SQS and both workspaces send and are written to, then a queue bound to A's device gets only A's events, every key names its device, B can neither read nor change A's opt-in, and none of B's events reach SQS", async () => {
    const [accountA, contactA, accountB, contactB] = [
      '15552730001',
      '15552730011',
      '15552730002',
      '15552730012',
    ];
    for (const phone of [contactA, contactB]) await stack().simApi('POST', '/contacts', { phone });
    const [a, b] = [await tenant('brka'), await tenant('brkb')];
    // Bound before any event of theirs is emitted (RabbitMQ drops what no queue is bound to).
    const onA = new RabbitReader(rabbit.url, EXCHANGE, `iso-a-${a.device}`, `${a.device}.#`);
    const everything = new RabbitReader(rabbit.url, EXCHANGE, 'iso-all', '#');
    await Promise.all([onA.start(), everything.start()]);
    readers.push(onA, everything);
    const onSqs = new SqsReader(client, queueUrl);
    onSqs.start();
    readers.push(onSqs);

    // B's workspace token on A's device's opt-in: the answer of a device nobody has.
    const settings = `/devices/${a.device}/events/brokers`;
    const nobody = `/devices/nobody-${randomBytes(4).toString('hex')}/events/brokers`;
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { sqs: { enabled: false }, rabbitmq: { enabled: false } }],
    ] as const) {
      const theirs = await stack().api(method, settings, body, b.owner);
      const none = await stack().api(method, nobody, body, b.owner);
      expect([theirs.status, theirs.body], `${method} A's opt-in as B`).to.deep.equal([404, none.body]);
    }
    const optIn = await stack().api<{ data: Record<string, unknown> }>(
      'PUT',
      settings,
      { sqs: { enabled: true } },
      a.owner,
    );
    expect(optIn.status, JSON.stringify(optIn.body)).to.equal(200);
    expect(optIn.body.data.sqs).to.deep.equal({ enabled: true });
    // B's own setting is untouched by A's: B never opted in to SQS.
    const bSettings = await stack().api<{ data: Record<string, unknown> }>(
      'GET',
      `/devices/${b.device}/events/brokers`,
      undefined,
      b.owner,
    );
    expect(bSettings.body.data.sqs).to.deep.equal({ enabled: false });

    await stack().fastLink(accountA, 'Brokers A', a.deviceToken);
    await stack().fastLink(accountB, 'Brokers B', b.deviceToken);
    const send = async (t: typeof a, to: string, text: string) => {
      const sent = await stack().api<{ messageId: string }>(
        'POST',
        `/devices/${t.device}/send`,
        { to, text },
        t.owner,
      );
      expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
      return sent.body.messageId;
    };
    const sentB = await send(b, contactB, 'for B only');
    const replyB = `B's contact writes ${randomBytes(4).toString('hex')}`;
    await stack().simApi('POST', `/contacts/${contactB}/send`, { to: accountB, text: replyB });
    const isRead = (id: string) => (m: Received) =>
      m.body.type === 'message.read' && m.body.data.messageId === id;
    await waitFor(() => everything.received.some(isRead(sentB)), {
      timeoutMs: 30_000,
      what: "B's read on RabbitMQ",
    });
    await waitFor(() => everything.received.some((m) => m.body.data.text === replyB), {
      timeoutMs: 30_000,
      what: "B's reply on RabbitMQ",
    });
    // A's own message goes last: once its read is on A's queue and on SQS, any of B's would be.
    const markA = await send(a, contactA, 'for A');
    await waitFor(() => onA.received.some(isRead(markA)) && onSqs.received.some(isRead(markA)), {
      timeoutMs: 30_000,
      what: "A's read on A's queue and on SQS",
    });
    await new Promise((r) => setTimeout(r, 1_000));

    const secrets = [b.device, sentB, replyB, accountB, contactB];
    for (const [outlet, got] of [
      ["A's RabbitMQ queue", onA.received],
      ['SQS', onSqs.received],
    ] as const) {
      expect(got.filter(isRead(markA)), `${outlet}: A's read`).to.have.length(1);
      expect(
        got.map((m) => m.body.data.deviceId),
        outlet,
      ).to.deep.equal(got.map(() => a.device));
      const text = JSON.stringify(got);
      for (const secret of secrets) expect(text, `${outlet}: ${secret}`).to.not.include(secret);
    }
    // B's events did go out, under B's device's keys; every key names its event's device.
    const ofB = everything.received.filter((m) => m.body.data.deviceId === b.device);
    expect(ofB.map((m) => m.body.type)).to.include.members(['message.read', 'message.received']);
    for (const m of everything.received)
      expect(m.key).to.equal(`${String(m.body.data.deviceId)}.${m.body.type}`);
    for (const m of onSqs.received) expect(m.key).to.equal(`${a.device}.${m.body.type}`);
  });
});
