/**
 * The round-trips bench's diagnosis (BENCH_TRACE): the commands a process sent through the tap
 * (resp-tap.ts), grouped into flights — commands that left within a few ms of each other with no
 * answer coming back in between, on whichever of its connections. A flight that had to wait for an
 * answer starts a new one, so a path of N flights costs N sequential round trips of the link.
 */
import type { RespTap, TappedCommand, TappedReply } from './resp-tap.js';

export interface Flight {
  /** When its first command left. */
  start: number;
  commands: TappedCommand[];
  /** The last answer the process got before the flight left (what it may have waited for). */
  after?: TappedReply;
}

/**
 * Commands of [from, to] in flights: a new one after `gapMs` or after any answer came back. A
 * flight's `after`: the answer its first command followed (`followed`).
 */
export function flightsOf(
  tap: RespTap,
  from: number,
  to: number,
  background: (c: TappedCommand) => boolean = () => false,
  gapMs = 5,
): Flight[] {
  const commands = tap.commands.filter((c) => c.sentAt >= from && c.sentAt <= to);
  const replies = tap.replies.filter((r) => r.at <= to);
  const flights: Flight[] = [];
  let r = 0; // replies[r] is the first one after the last command looked at
  let cur: Flight | undefined;
  for (const c of commands) {
    let answered = false;
    for (; r < replies.length && replies[r]!.at <= c.sentAt; r++)
      if (cur && replies[r]!.at > cur.start) answered = true;
    if (!cur || answered || c.sentAt - cur.start > gapMs) {
      cur = { start: c.sentAt, commands: [] };
      flights.push(cur);
    }
    cur.commands.push(c);
  }
  for (const f of flights) {
    const after = followed(tap, f.commands[0]!, background, gapMs);
    if (after) f.after = after;
  }
  return flights;
}

/**
 * The answer `c` followed: the last one before it left, the background's left out; of answers
 * that came within `gapMs` of that one, the last on `c`'s connection.
 */
export function followed(
  tap: RespTap,
  c: TappedCommand,
  background: (c: TappedCommand) => boolean,
  gapMs = 5,
): TappedReply | undefined {
  const before = tap.replies.filter(
    (r) => r.at <= c.sentAt && r.at >= c.sentAt - 60_000 && (!r.answers || !background(r.answers)),
  );
  const last = before.at(-1);
  if (!last) return undefined;
  return before.findLast((r) => r.at >= last.at - gapMs && r.conn === c.conn) ?? last;
}

/**
 * The flights that led to `until` one after another: the one whose answer came last before it
 * (the background's left out), the one whose answer that one's awaited command followed, and so
 * on back to an answer to a command of no flight here (`began`: a blocking read's, the job's
 * wake-up). Each step with the command whose answer the next one followed (`awaited`).
 */
export function criticalPath(
  flights: Flight[],
  tap: RespTap,
  until: number,
  background: (c: TappedCommand) => boolean,
): { steps: { flight: Flight; awaited: TappedCommand }[]; began?: TappedReply } {
  const flightOf = new Map<TappedCommand, Flight>();
  for (const f of flights) for (const c of f.commands) flightOf.set(c, f);
  let reply = tap.replies.findLast(
    (r) => r.at <= until && r.answers && flightOf.has(r.answers) && !background(r.answers),
  );
  const steps: { flight: Flight; awaited: TappedCommand }[] = [];
  for (let awaited = reply?.answers; awaited && flightOf.has(awaited); awaited = reply?.answers) {
    const flight = flightOf.get(awaited)!;
    if (steps.some((s) => s.flight === flight)) break;
    steps.unshift({ flight, awaited });
    reply = followed(tap, awaited, background);
  }
  return { steps, ...(reply ? { began: reply } : {}) };
}

/** Describes commands: a script call by its script's name, others by name and key shape. */
export class CommandNames {
  constructor(
    private readonly scripts: ReadonlyMap<string, string>,
    private readonly deviceId: string,
  ) {}

  /** `EVALSHA policy-admit-2`, `HGETALL mgw:{<dev>}:settings`, `BZPOPMIN bull:…:marker`. */
  of(c: TappedCommand): string {
    if (c.sha) return `${c.name} ${this.scripts.get(c.sha) ?? `sha ${c.sha.slice(0, 8)}`}`;
    if (c.name === 'CLIENT' || c.name === 'SCRIPT' || c.name === 'CONFIG')
      return `${c.name} ${c.args[0] ?? ''}`.trim();
    const key = c.args[0];
    return key === undefined ? c.name : `${c.name} ${this.shape(key)}`;
  }

  /** A key with the device's id, ids and long numbers folded: `mgw:{<dev>}:contact:#`. */
  shape(key: string): string {
    const folded = key
      .split(this.deviceId)
      .join('<dev>')
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/gi, '<id>')
      .replace(/[0-9A-F]{12,}/g, '<id>') // WhatsApp message ids
      .replace(/\d{5,}/g, '#');
    return folded.length > 60 ? `${folded.slice(0, 57)}…` : folded;
  }
}

/** `A, B ×2, C` in first-seen order. */
function tally(names: string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, k]) => (k > 1 ? `${n} ×${k}` : n)).join(', ');
}

/**
 * The listing: one line per flight and connection — when the flight left and that connection's
 * answers came back (ms from `zero`; `·` first for the background's flights), the answer the
 * flight followed — and `marks` (the 202, the frame) where they fall.
 */
export function formatFlights(
  flights: Flight[],
  tap: RespTap,
  names: CommandNames,
  zero: number,
  marks: { at: number; text: string }[],
  background: (f: Flight) => boolean = () => false,
): string[] {
  const ms = (t: number) => `${t - zero >= 0 ? '+' : '−'}${Math.abs(t - zero).toFixed(1)}`;
  const conn = (id: number) => `c${id}${tap.connection(id)?.name ? ` ${tap.connection(id)!.name}` : ''}`;
  const lines: string[] = [];
  const pending = [...marks].sort((a, b) => a.at - b.at);
  const flush = (until: number) => {
    while (pending.length && pending[0]!.at <= until) {
      const m = pending.shift()!;
      lines.push(`       ${ms(m.at).padStart(8)}  ── ${m.text}`);
    }
  };
  flights.forEach((f, i) => {
    flush(f.start);
    const byConn = new Map<number, TappedCommand[]>();
    for (const c of f.commands) byConn.set(c.conn, [...(byConn.get(c.conn) ?? []), c]);
    const after = f.after
      ? `  [after ${conn(f.after.conn)}'s answer${f.after.answers ? ` to ${names.of(f.after.answers).split(' ')[0]}` : ''} at ${ms(f.after.at)}]`
      : '';
    const left = `${background(f) ? '·' : ' '} ${String(i + 1).padStart(3)}  ${ms(f.start).padStart(8)}`;
    [...byConn].forEach(([id, cs], k) => {
      // Each connection's answers (a blocking read's comes when there is something to read; a
      // subscribed connection's commands are answered by pushes, not matched).
      const open = cs.some((c) => c.answeredAt === undefined);
      const back = tap.connection(id)?.subscriber
        ? '—'
        : open
          ? '…'
          : ms(Math.max(...cs.map((c) => c.answeredAt ?? c.sentAt)));
      const what = `${conn(id)}: ${tally(cs.map((c) => names.of(c)))}`;
      lines.push(
        `${k === 0 ? left : ' '.repeat(left.length)} → ${back.padStart(8)}  ${what}${k === 0 ? after : ''}`,
      );
    });
  });
  flush(Infinity);
  return lines;
}
