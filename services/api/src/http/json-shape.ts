import { listTooLong, type ValidationDetail } from '@mgw/contracts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** Longest top-level field name remembered (ours are a few characters). */
const MAX_KEY_BYTES = 64;

export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Most values (array items and object fields, at every level) the body may hold. */
  maxValues: number;
  /** Top-level fields holding a list, with the most items each may have (e.g. `to`). */
  lists?: Record<string, number>;
  /**
   * Values an item of such a list may hold inside it (a personalised `to` entry: its phone and
   * variables), counted apart from `maxValues`: a list of `max` items may hold `max` times this.
   * Without it they count against `maxValues`.
   */
  listItemValues?: number;
}

/**
 * Watches a JSON body while it streams in and says as soon as it is hostile: nested deeper than
 * `maxDepth` (14 MB of `[` would hold JSON.parse, and the event loop, for seconds), holding more
 * than `maxValues` values (a million tiny keys or items costs a second to parse, and more to
 * validate), or a top-level list over its own limit. It keeps a few counters, never the body.
 *
 * It reads bytes, not characters: every byte that matters (quote, backslash, brackets, comma,
 * colon) is ASCII, and UTF-8 never uses ASCII bytes inside a multi-byte character. Inside strings
 * it jumps from quote to backslash with `indexOf`, so a 13 MB base64 attachment costs a memchr.
 */
export class JsonShapeGuard {
  private depth = 0;
  /** Commas outside strings: n commas separate at least n + 1 values. */
  private commas = 0;
  private inString = false;
  /** The previous chunk ended on a backslash inside a string: the next byte is escaped. */
  private escaped = false;
  /** Bytes of the top-level string being read (a field name, if a colon follows). */
  private keyBytes: number[] | undefined;
  /** A top-level string just ended; it is a field name if the next byte is a colon. */
  private maybeKey: string | undefined;
  /** The top-level field whose value is being read. */
  private field: string | undefined;
  /** The top-level list being counted: its field, its limit and its commas so far. */
  private list: { field: string; max: number; commas: number; inner: number } | undefined;

  constructor(private readonly limits: JsonShapeLimits) {}

  /** Reads one more chunk; returns what is wrong with the body so far, if anything. */
  feed(chunk: Uint8Array): ValidationDetail | undefined {
    const n = chunk.length;
    // Positions of the next quote / backslash in this chunk (-1: none left, -2: not looked up).
    let nextQuote = -2;
    let nextSlash = -2;
    let i = 0;
    while (i < n) {
      if (this.escaped) {
        this.escaped = false;
        i++;
        continue;
      }
      if (this.inString) {
        if (nextQuote !== -1 && nextQuote < i) nextQuote = chunk.indexOf(QUOTE, i);
        if (nextSlash !== -1 && nextSlash < i) nextSlash = chunk.indexOf(BACKSLASH, i);
        const end = nextSlash !== -1 && (nextQuote === -1 || nextSlash < nextQuote) ? nextSlash : nextQuote;
        this.keep(chunk, i, end === -1 ? n : end);
        if (end === -1) return undefined;
        if (end === nextSlash) {
          this.escaped = true;
        } else {
          this.inString = false;
          this.endString();
        }
        i = end + 1;
        continue;
      }
      const c = chunk[i++]!;
      if (isSpace(c)) continue;
      const key = this.maybeKey;
      this.maybeKey = undefined;
      if (c === QUOTE) {
        this.inString = true;
        if (this.depth === 1) this.keyBytes = [];
      } else if (c === COLON) {
        if (key !== undefined) this.field = key;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++this.depth > this.limits.maxDepth) {
          return { path: [], message: `JSON nesting is deeper than ${this.limits.maxDepth} levels` };
        }
        const max = this.field === undefined ? undefined : this.limits.lists?.[this.field];
        if (this.depth === 2 && c === OPEN_ARRAY && max !== undefined) {
          this.list = { field: this.field!, max, commas: 0, inner: 0 };
        }
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (this.depth-- === 2) this.list = undefined;
      } else if (c === COMMA) {
        if (this.depth === 1) this.field = undefined;
        if (this.depth === 2 && this.list && ++this.list.commas >= this.list.max) {
          return listTooLong(this.list.field, this.list.max);
        }
        const perItem = this.limits.listItemValues;
        if (this.depth > 2 && this.list && perItem !== undefined) {
          const most = this.list.max * perItem;
          if (++this.list.inner >= most)
            return { path: [this.list.field], message: `${this.list.field} holds more than ${most} values` };
          continue;
        }
        if (++this.commas >= this.limits.maxValues) {
          return { path: [], message: `The JSON body holds more than ${this.limits.maxValues} values` };
        }
      }
    }
    return undefined;
  }

  /** Remembers the bytes [from, to) of a top-level string, up to MAX_KEY_BYTES. */
  private keep(chunk: Uint8Array, from: number, to: number): void {
    const bytes = this.keyBytes;
    if (!bytes) return;
    for (let j = from; j < to && bytes.length <= MAX_KEY_BYTES; j++) bytes.push(chunk[j]!);
  }

  private endString(): void {
    const bytes = this.keyBytes;
    this.keyBytes = undefined;
    if (bytes && bytes.length <= MAX_KEY_BYTES) this.maybeKey = Buffer.from(bytes).toString('utf8');
  }
}
