import { expect } from 'chai';
import { noiseFloor, rotatedRounds, SideBySide, verdict } from './side-by-side.js';

/** How often each side takes each place over the schedule. */
function placeCounts<S>(schedule: S[][]): Map<S, number[]> {
  const counts = new Map<S, number[]>();
  for (const order of schedule)
    order.forEach((side, place) => {
      const c = counts.get(side) ?? order.map(() => 0);
      c[place]!++;
      counts.set(side, c);
    });
  return counts;
}

describe('testing: side by side, never alone (issue 81, item 5)', () => {
  for (const n of [3, 4, 5]) {
    it(`When ${n} sides are scheduled, then each takes each place equally often and none is measured right after itself, round boundaries included`, () => {
      const sides = Array.from({ length: n }, (_, i) => `s${i}`);
      const schedule = rotatedRounds(sides, 2 * n);

      expect(schedule).to.have.length(2 * n);
      for (const order of schedule) expect([...order].sort()).to.deep.equal(sides);
      for (const [, perPlace] of placeCounts(schedule)) expect(perPlace).to.deep.equal(sides.map(() => 2));
      const sequence = schedule.flat();
      sequence.slice(1).forEach((side, i) => expect(side, `place ${i + 1}`).not.to.equal(sequence[i]));
    });
  }

  it('When the rounds asked for are not a multiple of the sides, then they are rounded up to one', () => {
    expect(rotatedRounds(['a', 'b', 'c'], 4)).to.deep.equal([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
    ]);
  });

  it('When two sides are scheduled, then the places are balanced (the boundary repeats a side: only a control avoids that)', () => {
    const schedule = rotatedRounds(['a', 'b'], 2);

    expect(schedule).to.deep.equal([
      ['a', 'b'],
      ['b', 'a'],
    ]);
  });

  it('When the control’s median equals the baseline but its rounds swing by 4–5 %, then the floor is the typical swing', () => {
    expect(noiseFloor([1.0, 1.04, 0.96, 1.05, 0.95])).to.be.closeTo(0.04, 1e-9);
  });

  it('When the control’s rounds agree but sit 3 % off the baseline, then the floor is that 3 %', () => {
    expect(noiseFloor([1.03, 1.03, 1.031])).to.be.closeTo(0.03, 1e-9);
  });

  it('When the floor is wider than the goal’s margin, then no verdict is printed and the refusal names both', () => {
    const line = verdict('this ÷ base CPU', 1.01, 0.045, { max: 1.03 });

    expect(line).to.match(/^no verdict: the noise floor ±4\.5 % is wider than the margin ±3\.0 %/);
    expect(line).not.to.match(/meets|misses/);
  });

  it('When the floor is inside the margin, then the verdict says whether the goal is met', () => {
    expect(verdict('this ÷ base CPU', 1.01, 0.02, { max: 1.03 })).to.match(
      /^verdict: this ÷ base CPU 1\.010 meets the goal ≤ 1\.03 \(noise floor ±2\.0 %, margin ±3\.0 %\)/,
    );
    expect(verdict('this ÷ previous pace', 0.95, 0.01, { min: 0.97 })).to.match(
      /0\.950 misses the goal ≥ 0\.97/,
    );
  });

  it('When a goal is exactly 1, then any noise refuses the verdict', () => {
    expect(verdict('x', 1.2, 0.001, { min: 1 })).to.match(
      /^no verdict: the noise floor ±0\.1 % is wider than the margin ±0\.0 %/,
    );
  });

  it('When rounds are recorded, then ratios pair each side with the baseline of the same round and the report prints the control as the floor', async () => {
    const bench = new SideBySide({ baseline: 'base', control: 'control', others: ['this'], rounds: 3 });
    // The machine slows by half in round 1: the per-round ratios do not see it.
    const speed = [1, 0.5, 1];
    const rate = { base: 100, control: 101, this: 90 };
    const seen: string[] = [];
    await bench.run(async (side, round) => {
      seen.push(side);
      return { rps: rate[side] * speed[round]! };
    });

    expect(seen).to.deep.equal([
      'base',
      'control',
      'this',
      'control',
      'this',
      'base',
      'this',
      'base',
      'control',
    ]);
    expect(bench.ratio('this', 'rps')).to.be.closeTo(0.9, 1e-9);
    expect(bench.floor('rps')).to.be.closeTo(0.01, 1e-9);
    const lines = bench.report({ metric: 'rps', label: 'req/s', goals: { this: { min: 0.97 } } });
    expect(lines[0]).to.equal('req/s (medians of 3 rounds): base 100 · control 101 · this 90');
    expect(lines[1]).to.equal('  control ÷ base 1.010 (rounds 1.01–1.01): noise floor ±1.0 %');
    expect(lines[2]).to.equal('  this ÷ base 0.900 (rounds 0.90–0.90): beyond the floor');
    expect(lines[3]).to.match(/verdict: this ÷ base req\/s 0\.900 misses the goal ≥ 0\.97/);
  });
});
