import { expect } from 'chai';
import {
  pooledIds,
  recipientAttribute,
  rootDecision,
  rootWordsDecision,
  samplingRule,
} from '../../src/index.js';

describe('common: trace ids and hashed recipients (issue 56)', () => {
  it('When ids are drawn across several pool refills, then each is lowercase hex of W3C length, valid and unique', () => {
    // A small pool: every few ids refill it, so a refill's edge is crossed many times.
    const ids = pooledIds(40);
    const traces = Array.from({ length: 2000 }, () => ids.generateTraceId());
    const spans = Array.from({ length: 2000 }, () => ids.generateSpanId());
    for (const t of traces)
      expect(t)
        .to.match(/^[0-9a-f]{32}$/)
        .and.not.match(/^0+$/);
    for (const s of spans)
      expect(s)
        .to.match(/^[0-9a-f]{16}$/)
        .and.not.match(/^0+$/);
    expect(new Set(traces).size).to.equal(traces.length);
    expect(new Set(spans).size).to.equal(spans.length);
  });

  it('When a recipient is hashed twice, or past the cache, then the same keyed hash comes back, never the number', () => {
    const phone = '15557770001';
    const first = recipientAttribute(phone);
    expect(first).to.match(/^[0-9a-f]{16}$/);
    expect(first).to.not.include('5557770001');
    expect(recipientAttribute(phone)).to.equal(first);
    // More numbers than the cache holds: the first is evicted, then hashed again the same.
    for (let i = 0; i < 5000; i++) recipientAttribute(`1555800${String(i).padStart(4, '0')}`);
    expect(recipientAttribute(phone)).to.equal(first);
    expect(recipientAttribute('15557770002')).to.not.equal(first);
  });
});

describe('common: the sampling rule read from OTEL_TRACES_SAMPLER as the SDK reads it (issue 71)', () => {
  it('When each sampler the specification names is set, then the rule says whether it follows a parent and how it decides a new trace', () => {
    const rule = (OTEL_TRACES_SAMPLER?: string, OTEL_TRACES_SAMPLER_ARG?: string) =>
      samplingRule({ OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG });
    expect(rule()).to.deep.equal({ parentBased: true, root: 'on' });
    expect(rule('always_on')).to.deep.equal({ parentBased: false, root: 'on' });
    expect(rule('always_off')).to.deep.equal({ parentBased: false, root: 'off' });
    expect(rule('parentbased_always_on')).to.deep.equal({ parentBased: true, root: 'on' });
    expect(rule('parentbased_always_off')).to.deep.equal({ parentBased: true, root: 'off' });
    expect(rule('traceidratio', '0.25')).to.deep.equal({ parentBased: false, root: 0.25 });
    expect(rule('parentbased_traceidratio', '0.1')).to.deep.equal({ parentBased: true, root: 0.1 });
    expect(rule('parentbased_traceidratio', '0')).to.deep.equal({ parentBased: true, root: 0 });
  });

  it('When the sampler is unknown or its ratio is missing, out of [0, 1] or not a number, then the SDK’s defaults apply: parent-based, and a ratio of 1', () => {
    const rule = (OTEL_TRACES_SAMPLER?: string, OTEL_TRACES_SAMPLER_ARG?: string) =>
      samplingRule({ OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG });
    expect(rule('jaeger_remote')).to.deep.equal({ parentBased: true, root: 'on' });
    for (const arg of [undefined, '', ' ', '1.5', '-0.1', 'ten', 'NaN', 'Infinity'])
      expect(rule('traceidratio', arg), String(arg)).to.deep.equal({ parentBased: false, root: 1 });
  });
});

describe('common: a new trace’s sampling decision made before its span (issue 71)', () => {
  it('When 20,000 random trace ids meet ratios from 0 to 1, then the decision is the SDK’s TraceIdRatioBasedSampler’s for every one', async () => {
    const { tracing } = await import('@opentelemetry/sdk-node');
    const ids = pooledIds();
    const traceIds = Array.from({ length: 20_000 }, () => ids.generateTraceId());
    // Edge words too: all f's, high bits set (signed 32-bit arithmetic), and the bound's neighbours.
    traceIds.push(
      'ffffffffffffffffffffffffffffffff',
      '80000000000000000000000000000000',
      '0000000000000000000000000000000f',
    );
    for (const ratio of [0, 0.0001, 0.05, 0.1, 0.5, 0.999999, 1]) {
      const sdk = new tracing.TraceIdRatioBasedSampler(ratio);
      const ours = rootDecision(ratio);
      let sampled = 0;
      for (const id of traceIds) {
        const want = sdk.shouldSample(undefined, id).decision === tracing.SamplingDecision.RECORD_AND_SAMPLED;
        if (ours(id) !== want)
          expect.fail(`ratio ${ratio}, trace ${id}: ours ${ours(id)}, the SDK's ${want}`);
        if (want) sampled++;
      }
      // And the share sampled is the ratio (within 1.5 points over 20,000 draws).
      expect(sampled / traceIds.length, `ratio ${ratio}`).to.be.closeTo(ratio, 0.015);
    }
    expect(rootDecision('on')(traceIds[0]!)).to.equal(true);
    expect(rootDecision('off')(traceIds[0]!)).to.equal(false);
  });

  it('When a new trace is decided on its random bytes before its id is made (issue 81), then the ids it keeps are exactly those the SDK’s sampler keeps, at the ratio', async () => {
    const { tracing } = await import('@opentelemetry/sdk-node');
    for (const ratio of [0, 0.1, 0.5, 1]) {
      const sdk = new tracing.TraceIdRatioBasedSampler(ratio);
      const keep = rootWordsDecision(ratio);
      const ids = pooledIds(160);
      let kept = 0;
      const draws = 20_000;
      for (let i = 0; i < draws; i++) {
        const id = ids.newTraceId(keep);
        if (id === undefined) continue;
        kept++;
        expect(id)
          .to.match(/^[0-9a-f]{32}$/)
          .and.not.match(/^0+$/);
        const want = sdk.shouldSample(undefined, id).decision === tracing.SamplingDecision.RECORD_AND_SAMPLED;
        if (!want) expect.fail(`ratio ${ratio}: kept ${id}, which the SDK's sampler drops`);
        // And the string rule agrees with the words rule on it.
        expect(rootDecision(ratio)(id), id).to.equal(true);
      }
      expect(kept / draws, `ratio ${ratio}`).to.be.closeTo(ratio, 0.015);
    }
    // The words rule is the string rule's, word by word, at the bound's edges too.
    for (const ratio of [0.0001, 0.25, 0.999999]) {
      const bound = Math.floor(ratio * 0xffffffff);
      for (const words of [0, bound - 1, bound, bound + 1, 0xffffffff]) {
        const id = `${words.toString(16).padStart(8, '0')}${'0'.repeat(24)}`;
        expect(rootWordsDecision(ratio)(words), `${ratio} ${words}`).to.equal(rootDecision(ratio)(id));
      }
    }
  });
});
