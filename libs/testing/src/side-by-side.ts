/**
 * Side by side, never alone (issue 81, item 5): what every bench that compares builds or sides
 * shares.
 *
 * - **The order rotates.** Round r measures the sides in their order shifted by r, and the rounds
 *   are rounded up to a multiple of the sides: each side takes each place equally often, and with
 *   three sides or more none is measured right after itself, not even across a round's end (a
 *   side measured right after itself reads warmer: its caches, its JIT and the machine's load are
 *   where it left them).
 * - **A control side.** A second instance of the baseline (another process of the same build,
 *   another counted run), measured as a side of its own: what two equal sides differ by in this
 *   run, on this machine.
 * - **Ratios within a round.** A side's ratio is the median over the rounds of its figure ÷ the
 *   baseline's in the same round (seconds apart, so the machine's drift weighs on both).
 * - **The noise floor** is the control's: the distance of its median ratio from 1, or, if wider,
 *   the median distance of its rounds' ratios from that median (one lucky round does not make
 *   the floor narrow). A difference inside it is not shown by the run.
 * - **No verdict when the floor is wider than the margin** the bench states (a goal of ≤ 1.03
 *   has a margin of ±3 %): the run cannot tell.
 */

/** The figures of one side in one round, by name (req/s, CPU per request, instructions…). */
export type Figures = Record<string, number>;

/**
 * The order of every round: `sides` shifted by one more each round, `rounds` rounded up to a
 * multiple of the sides so that each side takes each place equally often. With two sides a round
 * boundary repeats a side (AB BA): only a third side (the control) avoids that.
 */
export function rotatedRounds<S>(sides: readonly S[], rounds: number): S[][] {
  const n = sides.length;
  if (n === 0) throw new Error('rotatedRounds: no sides');
  const count = Math.ceil(Math.max(1, rounds) / n) * n;
  return Array.from({ length: count }, (_, r) => sides.map((_, i) => sides[(i + r) % n]!));
}

/** The middle value; of an even count, the mean of the two middle ones. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The noise floor from the control's per-round ratios to the baseline (as a fraction: 0.02 is
 * ±2 %): |median − 1|, or the median absolute deviation of the rounds' ratios if that is wider.
 */
export function noiseFloor(controlRatios: readonly number[]): number {
  const m = median(controlRatios);
  const spread = median(controlRatios.map((r) => Math.abs(r - m)));
  return Math.max(Math.abs(m - 1), spread);
}

/** A bench's goal for a ratio to its baseline: at most `max`, at least `min`. */
export interface Goal {
  max?: number;
  min?: number;
}

const pct = (x: number) => `±${(x * 100).toFixed(1)} %`;

/** The goal as printed: `≤ 1.03`, `≥ 0.97`, or both. */
export function goalText(goal: Goal): string {
  return [goal.min !== undefined ? `≥ ${goal.min}` : '', goal.max !== undefined ? `≤ ${goal.max}` : '']
    .filter(Boolean)
    .join(' and ');
}

/** The margin a goal leaves around 1 (≤ 1.03: 0.03; ≥ 0.97: 0.03); the narrower of two bounds. */
export function marginOf(goal: Goal): number {
  const sides = [
    goal.max !== undefined ? Math.abs(goal.max - 1) : Infinity,
    goal.min !== undefined ? Math.abs(1 - goal.min) : Infinity,
  ];
  const margin = Math.min(...sides);
  if (!Number.isFinite(margin)) throw new Error('a goal needs a min or a max');
  return margin;
}

/**
 * The verdict line for `what` (e.g. `this ÷ base CPU/request`) at `ratio`, or its refusal when the
 * noise floor is wider than the goal's margin.
 */
export function verdict(what: string, ratio: number, floor: number, goal: Goal): string {
  const margin = marginOf(goal);
  if (!(floor <= margin)) {
    return `no verdict: the noise floor ${pct(floor)} is wider than the margin ${pct(margin)} (${what} ${ratio.toFixed(3)}, goal ${goalText(goal)})`;
  }
  const met = (goal.max === undefined || ratio <= goal.max) && (goal.min === undefined || ratio >= goal.min);
  return `verdict: ${what} ${ratio.toFixed(3)} ${met ? 'meets' : 'misses'} the goal ${goalText(goal)} (noise floor ${pct(floor)}, margin ${pct(margin)})`;
}

export interface SideBySideOptions<S extends string> {
  /** The side every ratio divides by. */
  baseline: S;
  /** The second instance of the baseline, measured as a side of its own. */
  control: S;
  /** The sides compared with the baseline. */
  others: readonly S[];
  /** Rounds asked for (rounded up to a multiple of the sides). */
  rounds: number;
}

/** A metric's line in a report: its name, how to print a value, and a goal for some sides. */
export interface MetricReport<S extends string> {
  metric: string;
  /** E.g. `req/s`, `CPU µs/request`. */
  label: string;
  digits?: number;
  /** Goals of the ratio side ÷ baseline, by side: a verdict (or its refusal) is printed for each. */
  goals?: Partial<Record<S, Goal>>;
}

/** The rotated rounds of one bench, the figures recorded in them, and what they give. */
export class SideBySide<S extends string> {
  /** Baseline, control, then the others: the order of the first round. */
  readonly sides: S[];
  readonly schedule: S[][];
  readonly baseline: S;
  readonly control: S;
  private readonly recorded = new Map<S, Figures[]>();

  constructor(opts: SideBySideOptions<S>) {
    this.baseline = opts.baseline;
    this.control = opts.control;
    this.sides = [opts.baseline, opts.control, ...opts.others];
    if (new Set(this.sides).size !== this.sides.length) throw new Error('SideBySide: sides must differ');
    this.schedule = rotatedRounds(this.sides, opts.rounds);
    for (const side of this.sides) this.recorded.set(side, []);
  }

  get rounds(): number {
    return this.schedule.length;
  }

  /** What the rotation is, for a bench's heading. */
  describe(): string {
    return (
      `${this.rounds} rounds, the order rotated by one each round (each side in each place ` +
      `${this.rounds / this.sides.length}×); control = a second ${this.baseline}`
    );
  }

  /**
   * Measures every place of the schedule in order (`measure(side, round)` gives the side's
   * figures) and records them; `afterRound` sees each finished round.
   */
  async run(
    measure: (side: S, round: number) => Promise<Figures>,
    afterRound?: (round: number) => void,
  ): Promise<void> {
    for (const [round, order] of this.schedule.entries()) {
      for (const side of order) this.record(side, round, await measure(side, round));
      afterRound?.(round);
    }
  }

  record(side: S, round: number, figures: Figures): void {
    const rounds = this.recorded.get(side);
    if (!rounds) throw new Error(`SideBySide: no side ${side}`);
    rounds[round] = figures;
  }

  /** The side's figure of `metric` in every round recorded. */
  values(side: S, metric: string): number[] {
    return this.recorded.get(side)!.flatMap((f) => (f && metric in f ? [f[metric]!] : []));
  }

  median(side: S, metric: string): number {
    return median(this.values(side, metric));
  }

  /** Per round where both were measured: `a`'s figure ÷ `b`'s. */
  roundRatios(a: S, b: S, metric: string): number[] {
    const [fa, fb] = [this.recorded.get(a)!, this.recorded.get(b)!];
    return fa.flatMap((f, round) => {
      const g = fb[round];
      return f && g && metric in f && metric in g ? [f[metric]! / g[metric]!] : [];
    });
  }

  /** The median over the rounds of `side` ÷ `of` (default: the baseline). */
  ratio(side: S, metric: string, of: S = this.baseline): number {
    return median(this.roundRatios(side, of, metric));
  }

  /** The control's noise floor for `metric` (a fraction). */
  floor(metric: string): number {
    return noiseFloor(this.roundRatios(this.control, this.baseline, metric));
  }

  /** `side ÷ of` with its rounds' range, e.g. `this ÷ base 0.912 (rounds 0.88–0.95)`. */
  ratioText(side: S, metric: string, of: S = this.baseline): string {
    const rs = this.roundRatios(side, of, metric);
    const range =
      rs.length > 1 ? ` (rounds ${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})` : '';
    return `${side} ÷ ${of} ${median(rs).toFixed(3)}${range}`;
  }

  /**
   * The report of one metric: each side's median, the control's ratio as the noise floor, each
   * other side's ratio (beyond the floor or within it), and the verdicts of the goals given.
   */
  report({ metric, label, digits = 0, goals = {} }: MetricReport<S>): string[] {
    const floor = this.floor(metric);
    const medians = this.sides.map((s) => `${s} ${this.median(s, metric).toFixed(digits)}`).join(' · ');
    const lines = [
      `${label} (medians of ${this.rounds} rounds): ${medians}`,
      `  ${this.ratioText(this.control, metric)}: noise floor ${pct(floor)}`,
    ];
    for (const side of this.sides.slice(2)) {
      const r = this.ratio(side, metric);
      const shown = Math.abs(r - 1) > floor ? 'beyond the floor' : 'within the floor: no difference shown';
      lines.push(`  ${this.ratioText(side, metric)}: ${shown}`);
      const goal = goals[side];
      if (goal) lines.push(`  ${verdict(`${side} ÷ ${this.baseline} ${label}`, r, floor, goal)}`);
    }
    return lines;
  }
}
