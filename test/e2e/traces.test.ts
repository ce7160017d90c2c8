import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import {
  startNatsServer,
  startOtlpReceiver,
  useStack,
  waitFor,
  WebhookReceiver,
  type BrokerServerHandle,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@mgw/testing';

/**
 * Issue 56: one trace per message, from the API request to WhatsApp's receipts and the webhook,
 * exported by the four services over OTLP/HTTP to a real receiver on a local port.
 */
describe('e2e: OpenTelemetry traces from the request to the receipt and the webhook (four processes, OTLP/HTTP)', function () {
  this.timeout(180_000);
  let otlp: OtlpReceiver;
  let receiver: WebhookReceiver;
  let nats: BrokerServerHandle;
  before(async () => {
    otlp = await startOtlpReceiver();
    receiver = await WebhookReceiver.start();
    nats = await startNatsServer();
  });
  after(async () => {
    await receiver?.close();
    await otlp?.close();
    await nats?.stop();
  });

  describe('protobuf (the default protocol)', function () {
    const stack = useStack({
      notifier: true,
      sim: { receiptDelayMs: 20, readDelayMs: 50 },
      env: {
        ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
        WEBHOOK_SWEEP_MS: '500',
        // Read when the stack starts: the receiver listens by then (the outer `before`).
        get OTEL_EXPORTER_OTLP_ENDPOINT() {
          return otlp.url;
        },
        // Spans leave every 200 ms (the batch processor's default is 5 s); protobuf by default.
        OTEL_BSP_SCHEDULE_DELAY: '200',
        // The caller is trusted: its trace is continued (untrusted, the default: traces-caller-trust.test.ts).
        OTEL_TRUST_CALLER_SAMPLING: 'true',
        // The events go to a broker too (NATS JetStream): each publish joins its message's trace.
        get EVENTS_NATS_URL() {
          return nats.url;
        },
        EVENTS_BROKER_SWEEP_MS: '500',
      },
    });
    const account = '15550560001';
    const contacts = ['15550560002', '15550560003', '15550560004'];
    const secretText = `the secret text ${Date.now()}`;
    const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    let messageIds: string[] = [];

    before(async () => {
      await stack().linkByQr(account);
      await stack().waitForStatus('connected');
      // Paced: a wait for the device's turn shows as `message.pace` (a wait of nothing makes no span).
      await stack().redis.hset(keys.deviceSettings(stack().deviceId), 'sendGapMs', '200');
      const set = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
      receiver.secrets = [set.body.data.secret];
    });

    it('When a caller sends a list of 3 with a traceparent, then one trace continues it, and each recipient has accept → queue → send → delivered → read → webhook and broker spans across the four services', async () => {
      const res = await fetch(`${stack().apiUrl}/api/messenger/v1/send`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stack().token}`,
          'content-type': 'application/json',
          traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
        },
        body: JSON.stringify({ to: contacts, text: secretText }),
      });
      expect(res.status).to.equal(202);
      messageIds = ((await res.json()) as { messageIds: string[] }).messageIds;
      expect(messageIds).to.have.length(3);
      const inTrace = () => otlp.spans.filter((s) => s.traceId === caller.traceId);
      // Each process exports its spans in its own batches: wait until every part has arrived.
      const count = (name: string, type?: string) =>
        inTrace().filter((s) => s.name === name && (!type || s.attributes['mgw.event.type'] === type)).length;
      const attempts = () =>
        messageIds.filter((id) =>
          inTrace().some((s) => s.name.startsWith('process ') && s.attributes['mgw.message_id'] === id),
        ).length;
      await waitFor(
        () =>
          count('webhook.deliver', 'message.read') >= 3 &&
          count('message.read') >= 3 &&
          count('message.delivered') >= 3 &&
          attempts() === 3,
        { timeoutMs: 90_000, intervalMs: 200, what: 'every span of the three messages, in the trace' },
      ).catch(async (err: Error) => {
        // Say what was missing, and where the messages are, rather than only that it timed out.
        const states = await Promise.all(
          messageIds.map(
            async (id) =>
              (await stack().api<{ data: { status: string } }>('GET', `/messages/${id}`)).body.data?.status,
          ),
        );
        throw new Error(
          `${err.message}: attempts ${attempts()}/3, message.delivered ${count('message.delivered')}, ` +
            `message.read ${count('message.read')}, webhook.deliver(message.read) ${count('webhook.deliver', 'message.read')}; ` +
            `messages ${states.join(', ')}; spans in the trace: ${names(inTrace())}`,
        );
      });
      const spans = inTrace();
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const request = spans.find((s) => s.name === 'POST /api/messenger/v1/send')!;
      expect(request, names(spans)).to.exist;
      expect(request.parentSpanId).to.equal(caller.spanId);
      expect(request.service).to.equal('mgw-api');
      expect(request.kind).to.equal(2);
      // The request is its messages' accept: its span carries the accept's attributes, no child.
      const accept = request;
      expect(accept.attributes['mgw.recipients']).to.equal(3);
      expect(accept.attributes['mgw.outcome']).to.equal('accepted');
      expect(spans.some((s) => s.name === 'message.accept')).to.equal(false);

      // The device paces its sends (below): all but the first of the list wait for their turn.
      let paced = 0;
      for (const id of messageIds) {
        const attempt = spans.find(
          (s) => s.name.startsWith('process ') && s.attributes['mgw.message_id'] === id,
        )!;
        expect(attempt, `the attempt of ${id}: ${names(spans)}`).to.exist;
        expect(attempt.service).to.equal('mgw-sender');
        expect(attempt.parentSpanId).to.equal(accept.spanId);
        const children = spans.filter((s) => s.parentSpanId === attempt.spanId).map((s) => s.name);
        expect(children).to.include.members(['message.queue', 'message.send']);
        if (children.includes('message.pace')) paced++;
        for (const status of ['delivered', 'read']) {
          const receipt = spans.find(
            (s) => s.name === `message.${status}` && s.parentSpanId === attempt.spanId,
          );
          expect(receipt, `message.${status} of ${id}`).to.exist;
        }
        for (const type of ['message.sent', 'message.delivered', 'message.read']) {
          const hook = spans.find(
            (s) =>
              s.name === 'webhook.deliver' &&
              s.attributes['mgw.event.type'] === type &&
              byId.get(s.parentSpanId) === attempt,
          );
          expect(hook, `${type} of ${id}`).to.exist;
          expect(hook!.service).to.equal('mgw-notifier');
          expect(hook!.attributes['mgw.outcome']).to.equal('delivered');
          expect(hook!.attributes['http.response.status_code']).to.equal(200);
        }
      }
      expect(paced).to.be.at.least(2);
      await waitFor(
        () =>
          messageIds.every((id) => {
            const attempt = spans.find(
              (s) => s.name.startsWith('process ') && s.attributes['mgw.message_id'] === id,
            )!;
            return inTrace().some(
              (s) =>
                s.name === 'broker.publish' &&
                s.parentSpanId === attempt.spanId &&
                s.attributes['mgw.transport'] === 'nats',
            );
          }),
        { timeoutMs: 20_000, intervalMs: 200, what: 'the events published to NATS, in the trace' },
      );
      expect(new Set(spans.map((s) => s.service))).to.include.members([
        'mgw-api',
        'mgw-sender',
        'mgw-notifier',
      ]);
      expect(spans.every((s) => s.encoding === 'protobuf')).to.equal(true);

      // The request's access line carries its span's ids.
      const api = stack().processes.find((p) => p.name.startsWith('api'))!;
      const access = api.output
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.message === 'request' && l.trace_id === caller.traceId);
      expect(access, 'the access line of the traced request').to.include({
        route: '/api/messenger/v1/send',
        span_id: request.spanId,
      });
    });

    it('When Prometheus asks for OpenMetrics, then the latency histograms carry the trace as exemplars; plain text stays as it was', async () => {
      const scrape = async (name: string, accept?: string) => {
        const p = stack().processes.find((x) => x.name.startsWith(name))!;
        const res = await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`, {
          headers: accept ? { accept } : {},
        });
        return { type: res.headers.get('content-type') ?? '', text: await res.text() };
      };
      const om = 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5';
      const sender = await scrape('sender', om);
      expect(sender.type).to.include('application/openmetrics-text');
      expect(sender.text.trimEnd().endsWith('# EOF')).to.equal(true);
      expect(sender.text).to.match(
        new RegExp(
          String.raw`\nmgw_send_latency_seconds_bucket\{[^}]*\} \d+ # \{trace_id="${caller.traceId}",span_id="[0-9a-f]{16}"\}`,
        ),
      );
      const api = await scrape('api', om);
      expect(api.text).to.match(
        new RegExp(
          String.raw`\nmgw_http_request_duration_seconds_bucket\{[^}]*route="/api/messenger/v1/send"[^}]*\} \d+ # \{trace_id="${caller.traceId}"`,
        ),
      );
      const notifier = await scrape('notifier', om);
      expect(notifier.text).to.match(
        /\nmgw_webhook_delivery_latency_seconds_bucket\{[^}]*\} \d+ # \{trace_id="[0-9a-f]{32}"/,
      );
      // Counters keep their names in both expositions (prom-client renames them while it formats).
      expect(sender.text).to.match(/\nmgw_messages_total\{status="sent"\} \d+/);
      const plain = await scrape('sender');
      expect(plain.type).to.include('text/plain');
      expect(plain.text).not.to.include(' # {');
      expect(plain.text).to.match(/\nmgw_messages_total\{status="sent"\} \d+/);
    });

    it('When a contact writes, then its message starts a trace at the socket that its webhook delivery continues', async () => {
      const text = `hi from the contact ${Date.now()}`;
      await stack().simApi('POST', `/contacts/${contacts[0]}/send`, { to: account, text });
      await waitFor(
        () =>
          otlp.spans.some(
            (s) => s.name === 'webhook.deliver' && s.attributes['mgw.event.type'] === 'message.received',
          ),
        { timeoutMs: 30_000, intervalMs: 200, what: 'message.received delivered, traced' },
      );
      const hook = otlp.spans.find(
        (s) => s.name === 'webhook.deliver' && s.attributes['mgw.event.type'] === 'message.received',
      )!;
      const receive = otlp.spans.find((s) => s.spanId === hook.parentSpanId)!;
      expect(receive, names(otlp.spans.filter((s) => s.traceId === hook.traceId))).to.exist;
      expect(receive.name).to.equal('message.receive');
      expect(receive.parentSpanId).to.equal('');
      expect(receive.service).to.equal('mgw-sender');
    });

    it('When every exported span is searched, then no message text, token, webhook secret or phone number is in any of them', () => {
      const all = Buffer.concat(otlp.bodies).toString('latin1');
      for (const secret of [
        secretText,
        stack().token,
        ...receiver.secrets.map((s) => s.slice(6)),
        account,
        ...contacts,
      ])
        expect(all.includes(secret), `found ${secret.slice(0, 12)}…`).to.equal(false);
      const recipients = otlp.spans.filter((s) => s.attributes['mgw.recipient'] !== undefined);
      expect(recipients.length).to.be.greaterThan(0);
      for (const s of recipients) expect(String(s.attributes['mgw.recipient'])).to.match(/^[0-9a-f]{16}$/);
    });
  });
});

describe('e2e: OpenTelemetry traces over OTLP/HTTP JSON', function () {
  this.timeout(120_000);
  const otlp = useOtlpReceiver();
  const stack = useStack({
    sim: { receiptDelayMs: 20, readDelayMs: 50 },
    env: {
      get OTEL_EXPORTER_OTLP_ENDPOINT() {
        return otlp().url;
      },
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    },
  });

  it('When OTEL_EXPORTER_OTLP_PROTOCOL is http/json, then a send without a traceparent starts a trace of its own, from the API to the read receipt', async () => {
    await stack().linkByQr('15550560101');
    await stack().waitForStatus('connected');
    const sent = await stack().api<{ messageId: string }>('POST', '/send', {
      to: '15550560102',
      text: 'json',
    });
    expect(sent.status).to.equal(202);
    await waitFor(() => otlp().spans.some((s) => s.name === 'message.read'), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'the read receipt, traced',
    });
    const request = otlp().spans.find((s) => s.name === 'POST /api/messenger/v1/send')!;
    expect(request.parentSpanId).to.equal('');
    const trace = otlp().spans.filter((s) => s.traceId === request.traceId);
    expect(trace.map((s) => s.name)).to.include.members(['message.send', 'message.read']);
    expect(request.attributes['mgw.outcome']).to.equal('accepted');
    expect(trace.every((s) => s.encoding === 'json')).to.equal(true);
  });
});

describe('e2e: a message keeps its trace through a failover (two senders, SIGKILL mid-list)', function () {
  this.timeout(180_000);
  const otlp = useOtlpReceiver();
  const stack = useStack({
    senders: 2,
    env: {
      LEASE_TTL_MS: '15000',
      LEASE_RENEW_MS: '5000',
      get OTEL_EXPORTER_OTLP_ENDPOINT() {
        return otlp().url;
      },
      OTEL_BSP_SCHEDULE_DELAY: '200',
    },
  });

  it('When the holder is killed mid-list, then every message of the list is sent once, and every attempt span (the survivor sends the rest) is in the one trace of its request, under its accept', async () => {
    await stack().linkByQr('15550560201');
    await stack().waitForStatus('connected');
    await stack().redis.hset(keys.deviceSettings(stack().deviceId), 'sendGapMs', '50');
    const recipients = Array.from({ length: 40 }, (_, i) => `1555056${String(300 + i).padStart(4, '0')}`);
    const res = await stack().api<{ messageIds: string[] }>('POST', '/send', {
      to: recipients,
      text: 'failover',
    });
    expect(res.status).to.equal(202);
    const ids = res.body.messageIds;
    const records = () =>
      Promise.all(
        ids.map(
          async (id) =>
            (await stack().api<{ data: { status: string; sentAt?: string } }>('GET', `/messages/${id}`)).body
              .data,
        ),
      );
    const sent = async () => (await records()).filter((r) => r.status !== 'queued').length;
    await waitFor(async () => (await sent()) >= 10, { what: '10 sent', intervalMs: 50 });
    const lease = JSON.parse((await stack().redis.get(keys.lease(stack().deviceId)))!) as { owner: string };
    const victim = stack()
      .senders()
      .find((p) => lease.owner.includes(`:${p.child.pid}:`))!;
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exited;
    await waitFor(async () => (await sent()) === ids.length, {
      timeoutMs: 90_000,
      intervalMs: 500,
      what: 'all sent',
    });
    for (const to of recipients) expect((await stack().inbox(to)).length, to).to.equal(1);

    const request = otlp().spans.find((s) => s.name === 'POST /api/messenger/v1/send')!;
    // The request's span is the accept's (docs/monitoring.md, "Traces").
    const accept = request;
    const traced = () =>
      new Set(
        otlp()
          .spans.filter((s) => s.name.startsWith('process '))
          .map((s) => String(s.attributes['mgw.message_id'])),
      );
    const final = await records();
    // Every message the survivor sent (after the kill) has its attempt span; what the killed one
    // sent just before it died may not have left it (its spans leave in batches), nothing else.
    const afterKill = ids.filter((_, i) => Date.parse(final[i]!.sentAt!) > killedAt);
    expect(afterKill.length).to.be.greaterThan(0);
    await waitFor(() => afterKill.every((id) => traced().has(id)), {
      timeoutMs: 10_000,
      intervalMs: 200,
      what: 'an attempt span of every message sent after the kill',
    });
    const attempts = otlp().spans.filter(
      (s) => s.name.startsWith('process ') && ids.includes(String(s.attributes['mgw.message_id'])),
    );
    for (const a of attempts) {
      expect(a.traceId, String(a.attributes['mgw.message_id'])).to.equal(request.traceId);
      expect(a.parentSpanId).to.equal(accept.spanId);
    }
    // The survivor sent the rest, in the same trace.
    expect(attempts.some((a) => a.pid !== victim.child.pid)).to.equal(true);
  });
});

/** A receiver for the suite's stack: started before it (register first), closed after. */
function useOtlpReceiver(): () => OtlpReceiver {
  let receiver: OtlpReceiver | undefined;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(async () => {
    await receiver?.close();
  });
  return () => receiver!;
}

function names(spans: ReceivedSpan[]): string {
  return spans.map((s) => `${s.service}:${s.name}`).join(', ');
}
