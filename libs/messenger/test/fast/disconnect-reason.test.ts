import { expect } from 'chai';
import { classifyClose, reconnectDelayMs } from '../../src/index.js';

describe('messenger: what a closed socket means', () => {
  // Baileys closes with a Boom error; only its output.statusCode matters.
  const close = (statusCode?: number) =>
    classifyClose(statusCode ? Object.assign(new Error('closed'), { output: { statusCode } }) : undefined);

  it('When WhatsApp asks for a restart (515), then the socket reconnects at once', () => {
    expect(close(515)).to.deep.equal({ code: 515, reason: 'restart_required', action: 'restart' });
  });

  it('When the account was logged out (401) or replaced (440), then the owner stops instead of reconnecting', () => {
    expect(close(401).action).to.equal('logged-out');
    expect(close(440)).to.include({ reason: 'replaced', action: 'replaced' });
  });

  it('When the close is transient (408, 428, 500, 503), then it reconnects with a bounded, jittered backoff', () => {
    for (const code of [408, 428, 500, 503]) expect(close(code).action).to.equal('reconnect');
    for (let attempt = 0; attempt < 12; attempt++) {
      const d = reconnectDelayMs(attempt);
      const ceiling = Math.min(30_000, 1000 * 2 ** attempt);
      expect(d).to.be.within(0, ceiling);
    }
  });

  it('When many sockets close at once, then their reconnects spread over the whole backoff window (full jitter), not its upper half', () => {
    const delays = Array.from({ length: 2000 }, () => reconnectDelayMs(3));
    const ceiling = 8000;
    expect(Math.min(...delays)).to.be.below(ceiling * 0.05);
    expect(Math.max(...delays)).to.be.above(ceiling * 0.95);
    const lowerHalf = delays.filter((d) => d < ceiling / 2).length / delays.length;
    expect(lowerHalf).to.be.within(0.4, 0.6);
  });
});
