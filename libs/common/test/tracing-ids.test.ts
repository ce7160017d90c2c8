import { expect } from 'chai';
import { pooledIds, recipientAttribute } from '../src/index.js';

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
