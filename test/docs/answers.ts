/**
 * The answers the pages show under their commands, and how a real answer is held against them.
 *
 * A shown answer is a comment that follows a command — on the command's own line after it
 * (`curl … # → 200 {…}`) or on the lines right below it (`# {…}`, continued on the next `#` lines
 * until its brackets close) — whose text, after an optional `→` and an optional HTTP status
 * (`202`), starts with `{` or `[`. Text after the closing bracket is prose (`(it was still queued)`).
 * Several such comments in a row are alternatives, one per line: the real answer matches one.
 *
 * It is compared with the HTTP answer of the last `curl` the command above ran (its status and
 * body, whatever the command then pipes the body through), by these rules:
 * - a status shown is the status answered;
 * - a shown object is a subset: every key it shows is in the real object, with a matching value
 *   (keys it does not show may be there);
 * - a shown array matches element by element, the same length, except that a bare `…` element
 *   stands for any number (zero or more) of real elements;
 * - `"…"`, a bare `…` value and a placeholder string `"<what it is>"` match any value; inside a
 *   string, `…` matches any run of characters (`"med_…"`); a bare `…` member of an object
 *   (`{"a":1, …}`) says more keys follow and matches nothing;
 * - any other string, number, boolean or null is equal.
 */

export interface ShownAnswer {
  /** The page line of the comment (its first line). */
  line: number;
  /** The alternatives: a status when shown, and the parsed body. */
  alternatives: { status?: number; body: unknown; text: string }[];
}

/** The bare `…` in a shown answer: a value that matches anything, or elements that match any run. */
export const ELLIPSIS = Symbol('…');

const START = /^(?:→\s*)?(?:(\d{3})\s+)?([{[].*)$/s;

/** The text of a comment line after its `#`, or undefined when the line is not a comment. */
const commentText = (l: string) => /^\s*#\s?(.*)$/.exec(l)?.[1];

/** The length of the prefix of `text` in which the first bracket opened closes, or -1. */
function balancedLength(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Parses shown JSON with `…` (bare: a wildcard value, a wildcard run in arrays, "more keys" in objects). */
export function parseShown(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    throw new Error(`${what} at ${i} of ${text}`);
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '…') {
      i++;
      return ELLIPSIS;
    }
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') return (i++, obj);
      for (;;) {
        ws();
        if (text[i] === '…') i++;
        else {
          const key = value();
          if (typeof key !== 'string') fail('a key');
          ws();
          if (text[i++] !== ':') fail('":"');
          obj[key as string] = value();
        }
        ws();
        const sep = text[i++];
        if (sep === '}') return obj;
        if (sep !== ',') fail('"," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') return (i++, arr);
      for (;;) {
        arr.push(value());
        ws();
        const sep = text[i++];
        if (sep === ']') return arr;
        if (sep !== ',') fail('"," or "]"');
      }
    }
    const literal = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
      text.slice(i),
    );
    if (!literal) return fail('a value');
    i += literal[0].length;
    return JSON.parse(literal[0]) as unknown;
  };
  const result = value();
  ws();
  if (i < text.length) fail('the end');
  return result;
}

/** The shown answers of a block, with the index (in the block's lines) of the command's last line. */
export function shownAnswers(code: string, firstLine: number): (ShownAnswer & { after: number })[] {
  const lines = code.split('\n');
  const answers: (ShownAnswer & { after: number })[] = [];
  const isCommand = (l: string | undefined) =>
    l !== undefined && l.trim() !== '' && commentText(l) === undefined;
  /** Reads one answer starting with `start` (a comment text) at line index `i`; the next index. */
  const readOne = (start: string, i: number, into: ShownAnswer): number => {
    const m = START.exec(start)!;
    let text = m[2]!;
    let next = i + 1;
    while (balancedLength(text) < 0 && next < lines.length && commentText(lines[next]!) !== undefined) {
      text += `\n${commentText(lines[next]!)!}`;
      next++;
    }
    const end = balancedLength(text);
    if (end < 0) throw new Error(`line ${firstLine + 1 + i}: the shown answer never closes`);
    const json = text.slice(0, end);
    into.alternatives.push({ ...(m[1] ? { status: Number(m[1]) } : {}), body: parseShown(json), text: json });
    return next;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let answer: ShownAnswer | undefined;
    let next = i + 1;
    const trailing = /\s#\s+((?:→\s*)?(?:\d{3}\s+)?[{[].*)$/s.exec(line);
    if (isCommand(line) && trailing) {
      answer = { line: firstLine + 1 + i, alternatives: [] };
      next = readOne(trailing[1]!, i, answer);
      answers.push({ ...answer, after: i });
    } else if (isCommand(lines[i - 1]) && START.test(commentText(line) ?? '')) {
      answer = { line: firstLine + 1 + i, alternatives: [] };
      next = readOne(commentText(line)!, i, answer);
      answers.push({ ...answer, after: i - 1 });
    }
    if (!answer) continue;
    while (next < lines.length && START.test(commentText(lines[next]!) ?? '')) {
      next = readOne(commentText(lines[next]!)!, next, answer);
    }
    i = next - 1;
  }
  return answers;
}

/** Where `real` differs from `shown` (a path and both values), or undefined when it matches. */
export function mismatch(shown: unknown, real: unknown, at = ''): string | undefined {
  const here = at || '(the answer)';
  const differ = () => `${here}: shown ${show(shown)}, real ${JSON.stringify(real)}`;
  if (shown === ELLIPSIS || shown === '…') return undefined;
  if (typeof shown === 'string') {
    if (/^<[^<>]+>$/.test(shown)) return undefined;
    if (shown.includes('…')) {
      const pattern = new RegExp(`^${shown.split('…').map(escapeRegExp).join('.*')}$`, 's');
      return typeof real === 'string' && pattern.test(real) ? undefined : differ();
    }
    return shown === real ? undefined : differ();
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(real)) return differ();
    return arrayMismatch(shown, 0, real, 0, at) ? differ() : undefined;
  }
  if (shown !== null && typeof shown === 'object') {
    if (real === null || typeof real !== 'object' || Array.isArray(real)) return differ();
    for (const [key, value] of Object.entries(shown)) {
      const path = `${at}.${key}`;
      if (!(key in real)) return `${path}: shown ${show(value)}, real: no such key`;
      const why = mismatch(value, (real as Record<string, unknown>)[key], path);
      if (why) return why;
    }
    return undefined;
  }
  return shown === real ? undefined : differ();
}

/** Whether the shown elements from `s` on do not match the real ones from `r` on. */
function arrayMismatch(shown: unknown[], s: number, real: unknown[], r: number, at: string): boolean {
  if (s === shown.length) return r !== real.length;
  if (shown[s] === ELLIPSIS) {
    for (let skip = r; skip <= real.length; skip++)
      if (!arrayMismatch(shown, s + 1, real, skip, at)) return false;
    return true;
  }
  if (r === real.length || mismatch(shown[s], real[r], `${at}[${r}]`)) return true;
  return arrayMismatch(shown, s + 1, real, r + 1, at);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A shown value as the page writes it. */
function show(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (v === ELLIPSIS ? '…' : v)) ?? '…';
}

/** Every string value in a shown answer (a failure a page shows names its reason among them). */
export function shownStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(shownStrings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(shownStrings);
  return [];
}
