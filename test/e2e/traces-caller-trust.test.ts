import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startOtlpReceiver, useStack, waitFor, type OtlpReceiver } from '@mgw/testing';

/**
 * Issue 81: a caller's `traceparent` decides nothing unless the gateway is told to trust callers
 * (`OTEL_TRUST_CALLER_SAMPLING`, off by default). Untrusted, a request is recorded in a trace of
 * the gateway's own, by its own rule, and links to the caller's span: a caller's `…-01` cannot
 * make it record every request, nor its `…-00` hide one. (The trusted reading, where the caller's
 * trace is continued and its flags obeyed, is traces.test.ts's and traces-sampling.test.ts's.)
 */
describe('e2e: a caller’s traceparent when callers are not trusted (the default)', function () {
  this.timeout(120_000);
  let otlp: OtlpReceiver;
  before(async () => {
    otlp = await startOtlpReceiver();
  });
  after(async () => otlp?.close());

  const stack = useStack({
    env: {
      get OTEL_EXPORTER_OTLP_ENDPOINT() {
        return otlp.url;
      },
      OTEL_BSP_SCHEDULE_DELAY: '200',
      // Every new trace of the gateway's own is recorded: what a caller's flags would change shows.
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    },
  });

  it('When callers send an unsampled and a sampled traceparent, then each request is recorded in a new trace of the gateway’s own that links to the caller’s span, whatever its flags', async () => {
    const callers = (['00', '01'] as const).map((flags) => ({
      flags,
      traceId: randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
    }));
    for (const c of callers) {
      const res = await fetch(`${stack().apiUrl}/api/messenger/v1/status`, {
        headers: {
          authorization: `Bearer ${stack().token}`,
          traceparent: `00-${c.traceId}-${c.spanId}-${c.flags}`,
        },
      });
      expect(res.status).to.equal(200);
    }
    const linkedTo = (c: (typeof callers)[number]) =>
      otlp.spans.filter(
        (s) =>
          s.name === 'GET /api/messenger/v1/status' &&
          s.links.some((l) => l.traceId === c.traceId && l.spanId === c.spanId),
      );
    await waitFor(() => callers.every((c) => linkedTo(c).length === 1), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'each request’s span, linked to its caller',
    });
    for (const c of callers) {
      const [span] = linkedTo(c);
      expect(span!.traceId, `flags ${c.flags}: a trace of the gateway's own`).to.not.equal(c.traceId);
      expect(span!.parentSpanId, `flags ${c.flags}: a root, not the caller's child`).to.equal('');
      expect(span!.kind).to.equal(2);
    }
    // Nothing was recorded in a caller's own trace.
    const callerTraces = new Set(callers.map((c) => c.traceId));
    expect(otlp.spans.filter((s) => callerTraces.has(s.traceId))).to.deep.equal([]);
  });

  it('When a caller sends what is not a traceparent (the gateway’s own unsampled flag, upper case, a huge or garbled value), then the request is still recorded in a trace of its own, linked to nothing', async () => {
    const upper = `00-${randomBytes(16).toString('hex').toUpperCase()}-${randomBytes(8).toString('hex').toUpperCase()}-01`;
    const given = [
      '0',
      ' 0',
      upper,
      `00-${'f'.repeat(32)}-${'0'.repeat(16)}-01`,
      '00-'.repeat(2000),
      'ÿ-\u0080',
    ];
    const ids: string[] = [];
    for (const [i, traceparent] of given.entries()) {
      const requestId = `hostile-tp-${i}-${randomBytes(4).toString('hex')}`;
      ids.push(requestId);
      const res = await fetch(`${stack().apiUrl}/api/messenger/v1/status`, {
        headers: { authorization: `Bearer ${stack().token}`, traceparent, 'x-request-id': requestId },
      });
      expect(res.status, JSON.stringify(traceparent.slice(0, 40))).to.equal(200);
    }
    // Each access line names its request's trace (every trace is sampled here); that trace's span
    // is the request's, a root with no link.
    const api = stack().processes.find((p) => p.name.startsWith('api'))!;
    const traceOf = (requestId: string) =>
      api.output
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.message === 'request' && l.requestId === requestId)?.trace_id as string | undefined;
    await waitFor(() => ids.every((id) => traceOf(id) && otlp.spans.some((s) => s.traceId === traceOf(id))), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'each request’s span',
    });
    for (const [i, id] of ids.entries()) {
      const [span, ...more] = otlp.spans.filter((s) => s.traceId === traceOf(id));
      expect(more, `given[${i}]`).to.deep.equal([]);
      expect(span!.name).to.equal('GET /api/messenger/v1/status');
      expect(span!.parentSpanId, `given[${i}]: a root`).to.equal('');
      expect(span!.links, `given[${i}]: linked to nothing`).to.deep.equal([]);
    }
  });
});
