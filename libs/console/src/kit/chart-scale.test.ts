import { expect } from 'chai';
import { H, PAD, plot, yScale } from './chart-scale';

describe('console: the bar chart’s scale (kit/chart-scale.ts)', () => {
  it('When the counts are small, large or none, then the step is 1, 2 or 5 × 10^k and the top the first step at or above the largest', () => {
    expect(yScale(0)).to.deep.equal({ top: 1, step: 1 });
    expect(yScale(1)).to.deep.equal({ top: 1, step: 1 });
    expect(yScale(4)).to.deep.equal({ top: 4, step: 1 });
    expect(yScale(7)).to.deep.equal({ top: 8, step: 2 });
    expect(yScale(100)).to.deep.equal({ top: 100, step: 50 });
    expect(yScale(101)).to.deep.equal({ top: 150, step: 50 });
    expect(yScale(1234)).to.deep.equal({ top: 1500, step: 500 });
  });

  it('When any count up to a million is scaled, then the bars fit, the steps are whole, and one to four steps fill the plot', () => {
    const maxima = [...Array.from({ length: 2000 }, (_, i) => i), 99_999, 123_456, 999_999, 1_000_000];
    for (const max of maxima) {
      const { top, step } = yScale(max);
      const mantissa = step / 10 ** Math.floor(Math.log10(step));
      expect(Number.isInteger(step), `step of ${max}`).to.equal(true);
      expect([1, 2, 5], `step ${step} of ${max}`).to.include(Math.round(mantissa));
      expect(top, `top of ${max}`).to.be.at.least(max);
      expect(top - step, `no empty step above ${max}`).to.be.below(Math.max(max, 1));
      expect(top / step, `steps of ${max}`).to.be.within(1, 4);
    }
  });

  it('When counts are placed, then 0 stands on the plot’s floor, the top at its ceiling, and a grid line at every step', () => {
    const { y, ticks } = plot({ top: 150, step: 50 });
    expect(y(0)).to.equal(H - PAD.bottom);
    expect(y(150)).to.equal(PAD.top);
    expect(y(75)).to.equal((PAD.top + H - PAD.bottom) / 2);
    expect(ticks).to.deep.equal([0, 50, 100, 150]);
  });
});
