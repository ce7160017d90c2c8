/**
 * Random but reproducible API requests (well-formed HTTP, sent with fetch): valid and invalid
 * tokens, methods, paths under /api/messenger/v1, queries, bodies, content types and encodings,
 * request ids and idempotency keys. Everything comes from one seeded PRNG, so a seed replays the
 * same sequence of requests.
 */
import { gzipSync, deflateSync } from 'node:zlib';
import { HOSTILE_LIST_ENTRIES } from '@mgw/testing';

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What it mostly exercises (for the printed histogram). */
  endpoint: string;
  /**
   * Hostile on purpose, sent with a valid token to the right method: a list-shaped field holding
   * an entry that is no entry (`hostile-list`), or a body that is not UTF-8 (`not-utf8`). Its
   * answer must be a 400 with the error envelope and its details (a 413 when a huge entry takes
   * the body over the route's limit) — never a 5xx, never accepted. `bad-text`: a valid body of a
   * route but for one string field, holding a lone surrogate (any field), or NUL, a bidi control or
   * an invisible character (a name: docs/api.md, "Text and names").
   */
  hostile?: 'hostile-list' | 'not-utf8' | 'bad-text';
  /** The device its path names (`/devices/{id}/…`) when that is none of its token's devices. */
  elsewhere?: string;
}

/**
 * A token the fuzzer sends, and the devices it names in the path when it must name one (a workspace
 * token: `/api/messenger/v1/devices/{id}/…`, docs/workspaces.md). A plain string names none.
 */
export type FuzzToken = string | { value: string; devices: string[] };

/** Halves of UTF-16 pairs without their other half: no character, refused in every string. */
const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'];
/** What a name may not contain: NUL and other controls, bidi controls, invisible characters. */
const NOT_IN_NAMES = [
  '\u0000',
  '\n',
  '\u0085',
  '\u202e',
  '\u2066',
  '\u200f',
  '\u061c',
  '\u200b',
  '\u2060',
  '\ufeff',
];

/** The string fields of a JSON value, by path. */
function stringPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [at];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    stringPaths(v, [...at, Array.isArray(value) ? Number(k) : k]),
  );
}

/** List entries that are no entries (the test kit's), with a string long enough to matter. */
const HOSTILE_ENTRIES: unknown[] = [...HOSTILE_LIST_ENTRIES, 'x'.repeat(20_000)];

/** Byte sequences that are not UTF-8: a lone continuation, an overlong form, a cut sequence, a surrogate, 0xFF. */
const NOT_UTF8: number[][] = [
  [0x80],
  [0xc0, 0xaf],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xff],
  [0xf8, 0x88, 0x80],
];

const valueOf = (token: FuzzToken): string => (typeof token === 'string' ? token : token.value);

/** mulberry32: a small, fast, seedable PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class RequestFuzzer {
  private readonly rnd: () => number;

  constructor(
    seed: number,
    private readonly tokens: FuzzToken[],
    /** Message ids the API handed out (so /messages/:id sometimes finds one). */
    private readonly messageIds: string[] = [],
    /**
     * Device ids no token here may act on (another workspace's, one nobody has, one no device could
     * have): a request of a token with devices names one of them now and then instead of its own.
     */
    private readonly elsewhere: string[] = [],
  ) {
    this.rnd = prng(seed);
  }

  /**
   * The path prefix that names the device `token` acts on (none for a token that names none):
   * one of its own, or — not for a request that must reach its body's validation — now and then
   * one of `elsewhere`, which must be 404 whatever the rest of the request.
   */
  private devicePrefix(token: FuzzToken, own = false): { prefix: string; elsewhere?: string } {
    if (typeof token === 'string') return { prefix: '' };
    if (!own && this.elsewhere.length && this.chance(0.15)) {
      const id = this.pick(this.elsewhere);
      return { prefix: `/devices/${encodeURIComponent(id)}`, elsewhere: id };
    }
    return { prefix: `/devices/${this.pick(token.devices)}` };
  }

  next(): FuzzRequest {
    if (this.chance(0.06)) return this.badText();
    if (this.chance(0.12)) return this.hostile();
    const endpoint = this.pickWeighted<string>([
      ['connect', 25],
      ['disconnect', 15],
      ['status', 12],
      ['send', 15],
      ['otp', 10],
      ['messages', 10],
      ['junk', 13],
    ]);
    const method = this.method(endpoint);
    const query = this.query(endpoint);
    const headers: Record<string, string> = {};
    const token = this.auth(headers, query);
    const { prefix, elsewhere } = this.devicePrefix(token);
    const path = `/api/messenger/v1${prefix}${this.pathOf(endpoint)}${query.length ? '?' + query.join('&') : ''}`;
    let body: Buffer | undefined;
    if (!['GET', 'HEAD'].includes(method) && this.chance(0.7)) body = this.body(endpoint, headers);
    if (this.chance(0.3)) headers['x-request-id'] = this.requestId();
    if (this.chance(0.15)) headers['idempotency-key'] = this.idempotencyKey();
    if (this.chance(0.1)) headers.accept = this.pick(['*/*', 'text/html', 'application/xml', '']);
    // fetch sends header values as Latin-1 bytes; beyond that it refuses to send at all.
    for (const [k, v] of Object.entries(headers)) headers[k] = v.replace(/[^\x20-\xff]/g, '?');
    return { method, path, headers, body, endpoint, ...(elsewhere ? { elsewhere } : {}) };
  }

  /**
   * A hostile request on a route that takes a list (see `FuzzRequest.hostile`): each list-shaped
   * field of the public API in turn, with well-formed entries around the hostile ones, or any of
   * those bodies with bytes that are not UTF-8 spliced into a string (gzipped now and then).
   */
  private hostile(): FuzzRequest {
    const kind = this.chance(0.7) ? 'hostile-list' : 'not-utf8';
    const list = (good: () => unknown) => {
      const entries = Array.from({ length: this.int(0, 3) }, good);
      const at = () => this.int(0, entries.length);
      // null the most often: the commonest slip of a client building a list (a missing value).
      for (let n = this.int(1, 3); n > 0; n--)
        entries.splice(at(), 0, this.chance(0.3) ? null : this.pick(HOSTILE_ENTRIES));
      return entries;
    };
    const phone = () => `1555${String(this.int(0, 9_999_999)).padStart(7, '0')}`;
    const group = '120363012345678901@g.us';
    const [method, path, body] = this.pick<[string, string, () => Record<string, unknown>]>([
      ['POST', '/send', () => ({ to: list(phone), text: 'hi' })],
      [
        'POST',
        '/send',
        () => ({ to: list(() => ({ phone: phone(), vars: { name: 'x' } })), text: 'hi {{name}}' }),
      ],
      ['POST', '/send', () => ({ to: phone(), text: 'hi', mentions: list(phone) })],
      ['POST', '/send', () => ({ to: phone(), contacts: [{ name: 'Ann', phones: list(phone) }] })],
      ['POST', '/send', () => ({ to: phone(), contacts: list(() => ({ name: 'Ann', phones: [phone()] })) })],
      [
        'POST',
        '/send',
        () => ({ to: phone(), poll: { question: 'Which?', options: list(() => `o${this.int(0, 99)}`) } }),
      ],
      ['POST', '/contacts/check', () => ({ phones: list(phone) })],
      ['POST', '/groups', () => ({ subject: 'Team', participants: list(phone) })],
      ['POST', `/groups/${group}/participants`, () => ({ action: 'add', participants: list(phone) })],
      ['PUT', '/webhook', () => ({ url: 'https://example.test/h', events: list(() => 'message.sent') })],
    ]);
    const token = this.pick(this.tokens);
    const headers: Record<string, string> = {
      authorization: `Bearer ${valueOf(token)}`,
      'content-type': 'application/json',
    };
    let bytes: Buffer;
    let target = path;
    let verb = method;
    if (kind === 'hostile-list') bytes = Buffer.from(JSON.stringify(body()));
    else {
      // A valid /send but for the bytes in its text (which U+FFFD would have made acceptable), or
      // those bytes in a string of another route's body.
      const toSend = this.chance(0.7);
      const json = JSON.stringify(toSend ? { to: phone(), text: 'hi @@' } : { ...body(), note: '@@' });
      if (toSend) [target, verb] = ['/send', 'POST'];
      const [before, after] = json.split('@@') as [string, string];
      bytes = Buffer.concat([Buffer.from(before), Buffer.from(this.pick(NOT_UTF8)), Buffer.from(after)]);
    }
    if (this.chance(0.2)) {
      headers['content-encoding'] = 'gzip';
      bytes = gzipSync(bytes);
    }
    return {
      method: verb,
      path: `/api/messenger/v1${this.devicePrefix(token, true).prefix}${target}`,
      headers,
      body: bytes,
      endpoint: kind,
      hostile: kind,
    };
  }

  /**
   * A valid body of a route that takes text, but for one string field (any of them, in turn): a
   * lone surrogate spliced in, or in a name (`names` of the route) NUL, a bidi control or an
   * invisible character. See `FuzzRequest.hostile`.
   */
  private badText(): FuzzRequest {
    const phone = () => `1555${String(this.int(0, 9_999_999)).padStart(7, '0')}`;
    const to = phone();
    const routes: [string, string, Record<string, unknown>, string[]][] = [
      ['POST', '/send', { to, text: 'Hello مرحبا 👋' }, []],
      ['POST', '/send', { to: [to, phone()], text: 'Line one\n\tline two \u200f' }, []],
      [
        'POST',
        '/send',
        {
          to,
          attachment: {
            type: 'document',
            url: 'https://example.test/a.pdf',
            filename: 'menu.pdf',
            caption: 'Menu',
          },
        },
        ['attachment.filename'],
      ],
      ['POST', '/send', { to, poll: { question: 'Which?', options: ['Tea', 'Coffee'] } }, []],
      ['POST', '/send', { to, contacts: [{ name: 'Ann', phones: [phone()] }] }, ['contacts.0.name']],
      [
        'POST',
        '/send',
        { to, location: { latitude: 1, longitude: 2, name: 'Cafe', address: 'Main St' } },
        [],
      ],
      ['POST', '/otp', { phone: to, code: '1234', language: 'English' }, []],
      ['POST', '/contacts/check', { phones: [to, phone()] }, []],
      ['POST', '/groups', { subject: 'Team', participants: [to] }, ['subject']],
      ['PATCH', '/groups/120363012345678901@g.us', { subject: 'Team', description: 'Our team' }, ['subject']],
      ['PATCH', '/profile', { name: 'Ann', about: 'Available' }, ['name']],
      ['POST', '/labels', { name: 'VIP' }, ['name']],
      ['PATCH', '/labels/12', { name: 'VIP' }, ['name']],
      ['POST', '/channels', { name: 'News', description: 'Daily news' }, ['name']],
      ['PATCH', '/channels/120363000000000001@newsletter', { name: 'News' }, ['name']],
      ['POST', '/channels/120363000000000001@newsletter/posts', { text: 'Today' }, []],
      ['PUT', '/webhook', { url: 'https://example.test/h', events: ['message.sent'] }, []],
    ];
    const [method, path, body, names] = this.pick(routes);
    const field = this.pick(stringPaths(body));
    const isName = names.includes(field.join('.'));
    const inName = isName && this.chance(0.6);
    const bad = inName ? this.pick(NOT_IN_NAMES) : this.pick(LONE_SURROGATES);
    const parent = field
      .slice(0, -1)
      .reduce<Record<string | number, unknown>>(
        (node, key) => node[key] as Record<string | number, unknown>,
        body,
      );
    const last = field[field.length - 1]!;
    const value = parent[last] as string;
    // Inside a name, not at its ends: a schema that trims (a contact card's name) removes those.
    const at = inName ? this.int(1, value.length - 1) : this.int(0, value.length);
    parent[last] = value.slice(0, at) + bad + value.slice(at);
    const token = this.pick(this.tokens);
    const headers: Record<string, string> = {
      authorization: `Bearer ${valueOf(token)}`,
      'content-type': 'application/json',
    };
    // JSON.stringify writes a lone surrogate as an escape (`\ud800`): the JSON is well-formed.
    return {
      method,
      path: `/api/messenger/v1${this.devicePrefix(token, true).prefix}${path}`,
      headers,
      body: Buffer.from(JSON.stringify(body)),
      endpoint: 'bad-text',
      hostile: 'bad-text',
    };
  }

  private method(endpoint: string): string {
    const usual = ['connect', 'status', 'messages'].includes(endpoint) ? 'GET' : 'POST';
    if (this.chance(0.75)) return endpoint === 'connect' && this.chance(0.5) ? 'POST' : usual;
    return this.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']);
  }

  private pathOf(endpoint: string): string {
    switch (endpoint) {
      case 'messages': {
        const known = this.messageIds.length && this.chance(0.3);
        return `/messages/${known ? this.pick(this.messageIds) : encodeURIComponent(this.junkString(1, 40))}`;
      }
      case 'junk':
        return this.pick([
          '',
          '/',
          '/connect/extra',
          '/SEND',
          '/messages',
          '/messages/',
          '/status/..',
          '/%E2%98%83',
          '/send%00',
          `/${encodeURIComponent(this.junkString(1, 30))}`,
          '/otp/' + 'a'.repeat(this.int(1, 3000)),
        ]);
      default:
        return `/${endpoint}`;
    }
  }

  private query(endpoint: string): string[] {
    const q: string[] = [];
    const add = (k: string, v: string) => q.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
    if (endpoint === 'connect') {
      if (this.chance(0.5)) add('method', this.pick(['qrCode', 'pairingCode', 'bogus', '', 'QRCODE']));
      if (this.chance(0.4)) add('phoneNumber', this.phone());
      if (this.chance(0.2)) add('forceNew', this.pick(['true', 'false', 'yes', '1']));
      if (this.chance(0.4)) add('rawQrCode', this.pick(['true', 'false', 'maybe']));
    }
    if (this.chance(0.08)) add(this.junkString(1, 10), this.junkString(0, 20));
    if (this.chance(0.03)) {
      add('method', 'qrCode');
      add('method', 'pairingCode');
    }
    return q;
  }

  /** Sets the request's credentials (valid or not); returns the token they were made from. */
  private auth(headers: Record<string, string>, query: string[]): FuzzToken {
    const token = this.pick(this.tokens);
    const valid = valueOf(token);
    const kind = this.pickWeighted<string>([
      ['valid', 62],
      ['invalid', 15],
      ['none', 8],
      ['query', 8],
      ['malformed', 7],
    ]);
    if (kind === 'valid') headers.authorization = `Bearer ${valid}`;
    if (kind === 'invalid')
      headers.authorization = `Bearer mgw_${this.junkString(0, 60).replace(/[^\x21-\x7e]/g, 'x')}`;
    if (kind === 'query') query.push(`token=${encodeURIComponent(this.chance(0.8) ? valid : 'nope')}`);
    if (kind === 'malformed') {
      headers.authorization = this.pick([
        'Bearer',
        'Basic dXNlcjpwYXNz',
        `bearer  ${valid}`,
        valid,
        'Bearer ' + 'x'.repeat(5000),
      ]);
    }
    return token;
  }

  private body(endpoint: string, headers: Record<string, string>): Buffer {
    let text: string;
    const shape = this.int(0, 9);
    if (shape <= 3 && endpoint === 'send') text = JSON.stringify(this.sendBody());
    else if (shape <= 3 && endpoint === 'otp') text = JSON.stringify(this.otpBody());
    else if (shape <= 5) text = JSON.stringify(this.randomValue(3));
    else if (shape === 6)
      text = '{"to": "1555' + this.junkString(0, 20); // malformed JSON
    else if (shape === 7) text = this.chance(0.02) ? 'x'.repeat(16 * 1024 * 1024) : this.junkString(0, 200);
    else if (shape === 8) text = 'to=15550000000&text=hi';
    else text = '';
    headers['content-type'] = this.pickWeighted<string>([
      ['application/json', 70],
      ['application/json; charset=utf-8', 8],
      ['application/json; charset=utf-16', 3],
      ['text/plain', 6],
      ['application/x-www-form-urlencoded', 5],
      ['multipart/form-data; boundary=x', 3],
      ['application/vnd.api+json', 5],
    ]);
    let bytes = Buffer.from(text);
    const encoding = this.pickWeighted<string>([
      ['', 80],
      ['gzip', 8],
      ['deflate', 4],
      ['br', 3],
      ['identity', 2],
      ['bogus', 3],
    ]);
    if (encoding) {
      headers['content-encoding'] = encoding;
      if (encoding === 'gzip' && this.chance(0.8)) bytes = gzipSync(bytes);
      if (encoding === 'deflate' && this.chance(0.8)) bytes = deflateSync(bytes);
    }
    return bytes;
  }

  private sendBody(): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    body.to = this.chance(0.7) ? this.phone() : Array.from({ length: this.int(0, 5) }, () => this.phone());
    if (this.chance(0.8)) body.text = this.junkString(0, 100);
    if (this.chance(0.2)) {
      body.attachment = {
        type: this.pick(['image', 'video', 'audio', 'document', 'sticker', 'exe']),
        ...(this.chance(0.5)
          ? { url: this.pick(['https://127.0.0.1:1/x.png', 'ftp://x', 'not a url']) }
          : {}),
        ...(this.chance(0.5) ? { base64: this.pick(['aGVsbG8=', '!!!', '']) } : {}),
      };
    }
    if (this.chance(0.1)) body.existingMessageId = this.junkString(0, 200);
    if (this.chance(0.1)) body[this.junkString(1, 8)] = this.randomValue(1);
    return body;
  }

  private otpBody(): Record<string, unknown> {
    return {
      ...(this.chance(0.9) ? { phone: this.phone() } : {}),
      ...(this.chance(0.9) ? { code: this.pick(['1234', 12345678, '12ab', 99, '000000', null]) } : {}),
      ...(this.chance(0.3) ? { language: this.pick(['English', 'Arabic', 'Klingon', 7]) } : {}),
    };
  }

  private randomValue(depth: number): unknown {
    const kind = this.int(0, depth > 0 ? 7 : 4);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.pick([0, -1, 1e308, 3.14, Number.MAX_SAFE_INTEGER + 2]);
      case 3:
        return this.junkString(0, 50);
      case 4:
        return 'z'.repeat(this.int(0, 20_000));
      case 5:
      case 6:
        return Object.fromEntries(
          Array.from({ length: this.int(0, 6) }, () => [
            this.pick([
              'to',
              'text',
              'phone',
              'code',
              'attachment',
              '__proto__',
              'constructor',
              this.junkString(1, 8),
            ]),
            this.randomValue(depth - 1),
          ]),
        );
      default:
        return Array.from({ length: this.int(0, 6) }, () => this.randomValue(depth - 1));
    }
  }

  private phone(): string {
    return this.pick([
      `1555${String(this.int(0, 9_999_999)).padStart(7, '0')}`,
      `+1555${this.int(1_000_000, 9_999_999)}`,
      '123',
      '',
      '٠١٢٣٤٥٦٧٨٩',
      '1555000000000000000000',
    ]);
  }

  private requestId(): string {
    return this.chance(0.6) ? `fuzz-${this.int(0, 1e9)}` : this.junkString(0, 200).replace(/[\r\n]/g, '');
  }

  private idempotencyKey(): string {
    return this.chance(0.6) ? `k${this.int(0, 50)}` : 'x'.repeat(this.int(0, 400));
  }

  /** Printable and non-ASCII characters (header-safe callers strip what headers cannot carry). */
  private junkString(min: number, max: number): string {
    const alphabet = 'abcXYZ019 -_./:%?#&=+"\'<>{}[]\\|~`!@$^*()éü中文😀\u200b';
    const chars = Array.from(alphabet);
    return Array.from({ length: this.int(min, max) }, () => this.pick(chars)).join('');
  }

  private chance(p: number): boolean {
    return this.rnd() < p;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.rnd() * (max - min + 1));
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rnd() * items.length)]!;
  }

  private pickWeighted<T>(items: Array<[T, number]>): T {
    const sum = items.reduce((s, [, w]) => s + w, 0);
    let r = this.rnd() * sum;
    for (const [item, w] of items) {
      if ((r -= w) < 0) return item;
    }
    return items[items.length - 1]![0];
  }
}
