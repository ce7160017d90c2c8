import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { NOT_SAMPLED } from '@mgw/common';
import { BULL_PREFIX, keys, sendQueueName } from '@mgw/contracts';
import { startOtlpReceiver, useStack, waitFor, WebhookReceiver, type OtlpReceiver } from '@mgw/testing';

/**
 * Issue 71: sampling is decided first, and a message's decision travels with it. A request the
 * sampler leaves out builds no span, and no service after it (the sender's attempt, its receipts,
 * the webhook's delivery) starts a trace of that message on its own; a caller's `traceparent`
 * decides for the whole message either way. Four processes, a real OTLP receiver.
 */
describe('e2e: traces sampled at the request, the decision carried to every service (OTLP/HTTP)', function () {
  this.timeout(180_000);
  let otlp: OtlpReceiver;
  let receiver: WebhookReceiver;
  before(async () => {
    otlp = await startOtlpReceiver();
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await otlp?.close();
  });

  const stack = useStack({
    notifier: true,
    sim: { receiptDelayMs: 20, readDelayMs: 50 },
    env: {
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      WEBHOOK_SWEEP_MS: '500',
      get OTEL_EXPORTER_OTLP_ENDPOINT() {
        return otlp.url;
      },
      OTEL_BSP_SCHEDULE_DELAY: '200',
      // Half of the new traces: which ones, the API decides from each trace's id.
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.5',
      // Callers are trusted: their flags decide (untrusted, the default: traces-caller-trust.test.ts).
      OTEL_TRUST_CALLER_SAMPLING: 'true',
    },
  });
  const account = '15550710001';

  before(async () => {
    await stack().linkByQr(account);
    await stack().waitForStatus('connected');
    const set = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    receiver.secrets = [set.body.data.secret];
  });

  /** Sends one message (with `traceparent` when given, and an `X-Request-Id`); its id. */
  const send = async (to: string, traceparent?: string, requestId?: string): Promise<string> => {
    const res = await fetch(`${stack().apiUrl}/api/messenger/v1/send`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack().token}`,
        'content-type': 'application/json',
        ...(traceparent ? { traceparent } : {}),
        ...(requestId ? { 'x-request-id': requestId } : {}),
      },
      body: JSON.stringify({ to, text: 'sampled or not' }),
    });
    expect(res.status).to.equal(202);
    return ((await res.json()) as { messageId: string }).messageId;
  };
  /** Until every one of `ids` was read and its `message.read` webhook delivered, then one more export. */
  const settled = async (ids: string[]) => {
    await waitFor(
      () =>
        ids.every((id) =>
          receiver.deliveries.some((d) => d.body.type === 'message.read' && d.body.data.messageId === id),
        ),
      { timeoutMs: 90_000, intervalMs: 200, what: 'every message read and its webhook delivered' },
    );
    // Each process exports every 200 ms: a span of these messages would have arrived by now.
    await new Promise((r) => setTimeout(r, 1_500));
  };
  const tracesOf = (name: (n: string) => boolean) =>
    new Set(otlp.spans.filter((s) => name(s.name)).map((s) => s.traceId));

  it('When 20 sends without a traceparent meet a 50 % ratio, then every trace the sender or the webhook records is one the API sampled, and each sampled one has its attempt', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await send(`155507101${String(i).padStart(2, '0')}`));
    await settled(ids);
    const requests = tracesOf((n) => n === 'POST /api/messenger/v1/send');
    // On a loaded machine an export may come late: each sampled request's attempt, or the check says.
    await waitFor(() => [...requests].every((t) => tracesOf((n) => n.startsWith('process ')).has(t)), {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: 'the attempt of every sampled request',
    }).catch(() => undefined);
    const attempts = tracesOf((n) => n.startsWith('process '));
    const downstream = tracesOf(
      (n) => n.startsWith('message.') || n === 'webhook.deliver' || n.startsWith('process '),
    );
    // 0 or 20 of 20 at one half each: once in half a million runs.
    expect(requests.size, 'the requests sampled').to.be.within(1, 19);
    expect(
      [...downstream].filter((t) => !requests.has(t)),
      'traces no request began',
    ).to.deep.equal([]);
    expect(
      [...requests].filter((t) => !attempts.has(t)),
      'sampled requests without their attempt',
    ).to.deep.equal([]);
  });

  it('When a message is not sampled, then its job and its record carry the plain flag, not a traceparent; a sampled one’s carry its trace (issue 81)', async () => {
    const unsampled = randomBytes(16).toString('hex');
    const sampled = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const [quiet, traced] = [
      await send('15550710301', `00-${unsampled}-${parent}-00`),
      await send('15550710302', `00-${sampled}-${parent}-01`),
    ];
    await settled([quiet, traced]);
    const { deviceId, redis } = stack();
    // What arrived in Redis, as the sender and the notifier read it: BullMQ's `tm` of the job (kept
    // an hour after it completed), the record's `tp`, and each of the message's events' `tp`.
    const queue = new Queue(sendQueueName(deviceId), { connection: redis as never, prefix: BULL_PREFIX });
    try {
      const tm = async (id: string) => (await queue.getJob(id))?.opts.telemetry?.metadata;
      expect(await tm(quiet), 'the unsampled job’s tm').to.equal(NOT_SAMPLED);
      expect(JSON.parse((await tm(traced))!) as unknown, 'the sampled job’s tm')
        .to.have.property('traceparent')
        .that.matches(new RegExp(`^00-${sampled}-[0-9a-f]{16}-01$`));
    } finally {
      await queue.close();
    }
    const tp = (id: string) => redis.hget(keys.message(deviceId, id), 'tp');
    expect(await tp(quiet), 'the unsampled record’s tp').to.equal(NOT_SAMPLED);
    expect(await tp(traced), 'the sampled record’s tp').to.match(
      new RegExp(`^00-${sampled}-[0-9a-f]{16}-01$`),
    );
    // And nothing of the unsampled message was recorded by any service.
    expect(otlp.spans.filter((s) => s.traceId === unsampled).map((s) => s.name)).to.deep.equal([]);
  });

  it('When a caller sends one message with an unsampled traceparent and one with a sampled one, then nothing of the first is recorded anywhere and the second is, whatever the ratio', async () => {
    const unsampled = randomBytes(16).toString('hex');
    const sampled = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const ids = [
      await send('15550710201', `00-${unsampled}-${parent}-00`, `unsampled-${unsampled}`),
      await send('15550710202', `00-${sampled}-${parent}-01`, `sampled-${sampled}`),
    ];
    await settled(ids);
    const names = () => otlp.spans.filter((s) => s.traceId === sampled).map((s) => s.name);
    const wanted = ['POST /api/messenger/v1/send', 'message.send', 'message.read', 'webhook.deliver'];
    // On a loaded machine an export may come late: the sampled message's spans, or the check says.
    await waitFor(() => wanted.every((n) => names().includes(n)), {
      timeoutMs: 15_000,
      intervalMs: 200,
      what: 'the sampled message’s spans',
    }).catch(() => undefined);
    expect(
      otlp.spans.filter((s) => s.traceId === unsampled).map((s) => `${s.service}:${s.name}`),
    ).to.deep.equal([]);
    expect(names()).to.include.members(wanted);
    const request = otlp.spans.find(
      (s) => s.traceId === sampled && s.name === 'POST /api/messenger/v1/send',
    )!;
    expect(request.parentSpanId, 'the caller’s span is the parent').to.equal(parent);

    // Only a trace that exists is named: in the access line, and as an exemplar of any service.
    const api = stack().processes.find((p) => p.name.startsWith('api'))!;
    const access = (requestId: string) =>
      api.output
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.message === 'request' && l.requestId === requestId);
    expect(access(`unsampled-${unsampled}`))
      .to.include({ status: 202 })
      .and.not.have.property('trace_id');
    expect(access(`sampled-${sampled}`)).to.include({ trace_id: sampled, span_id: request.spanId });
    for (const name of ['api', 'sender', 'notifier']) {
      const p = stack().processes.find((x) => x.name.startsWith(name))!;
      const res = await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`, {
        headers: { accept: 'application/openmetrics-text;version=1.0.0' },
      });
      const text = await res.text();
      expect(text, `${name}'s exposition`).to.include('# {trace_id="');
      expect(text, `${name}'s exemplars`).to.not.include(unsampled);
    }
  });
});
