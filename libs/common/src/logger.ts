import winston from 'winston';
import { activeSpanIds, tracingOn } from './tracing.js';

export type Logger = winston.Logger;

/**
 * Keys whose values never reach a log line: secrets (tokens, credentials, pairing material), OTP
 * codes and message content. Matched case-insensitively against every key of the log entry, at
 * any depth. A plain `code` is not here: socket close codes and error codes must stay readable,
 * so an OTP code is only ever logged (if at all) as `otp` or `otpCode`.
 */
const REDACTED_KEYS = new Set([
  'token',
  'apitoken',
  'authorization',
  'cookie',
  'password',
  'secret',
  'otp',
  'otpcode',
  'pairingcode',
  'qr',
  'qrcode',
  'text',
  'caption',
  'base64',
  'body',
  'conversation',
  'creds',
]);
/** Compound names of secrets (`accessToken`, `clientSecret`, `redisPassword`, …); `tokenId` is not one. */
const REDACTED_SUFFIX = /(token|secret|password|authorization|cookie)$/i;
const isSecretKey = (key: string) => REDACTED_KEYS.has(key.toLowerCase()) || REDACTED_SUFFIX.test(key);
const REDACTED = '[REDACTED]';
const TOKEN_IN_URL = /([?&]token=)[^&\s#]+/gi;
const BEARER = /(bearer\s+)[\w.~+/=-]+/gi;

/** Cheap test first: almost no logged string holds either, and `replace` always copies. */
const MAY_HOLD_SECRET = /token=|bearer/i;

function scrubString(s: string): string {
  if (!MAY_HOLD_SECRET.test(s)) return s;
  return s.replace(TOKEN_IN_URL, `$1${REDACTED}`).replace(BEARER, `$1${REDACTED}`);
}

/** Errors become {name, message, stack} (winston drops an Error nested in metadata). */
export function serializeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const out: Record<string, unknown> = {
      name: err.name,
      message: scrubString(err.message),
      // the stack's first line repeats the message
      stack: err.stack === undefined ? undefined : scrubString(err.stack),
    };
    const withCode = err as Error & { code?: unknown; statusCode?: unknown };
    if (withCode.code !== undefined) out.errorCode = withCode.code;
    if (withCode.statusCode !== undefined) out.statusCode = withCode.statusCode;
    return out;
  }
  return { message: String(err) };
}

function scrub(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return scrubString(value);
  if (value instanceof Error) return serializeError(value);
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretKey(k) && v !== undefined ? REDACTED : scrub(v, depth + 1, seen);
  }
  return out;
}

const redact = winston.format((info) => {
  const fields = info as Record<string, unknown>;
  let seen: WeakSet<object> | undefined;
  for (const key of Object.keys(info)) {
    if (key === 'level') continue;
    const v = fields[key];
    if (isSecretKey(key) && v !== undefined) fields[key] = REDACTED;
    else if (typeof v === 'string') fields[key] = scrubString(v);
    else if (v !== null && typeof v === 'object') fields[key] = scrub(v, 0, (seen ??= new WeakSet()));
  }
  return info;
});

/** winston's key for the finished line (triple-beam's `MESSAGE`). */
const MESSAGE = Symbol.for('message');
const safeJson = winston.format.json();

/**
 * One JSON line per entry. `JSON.stringify` where it can (winston's own `json()` configures its
 * serializer anew and sorts the keys on every line: a few µs per request's access line); winston's
 * for what it cannot (a BigInt, a cycle the redaction did not reach).
 */
const jsonLine = winston.format((info) => {
  try {
    (info as Record<symbol, unknown>)[MESSAGE] = JSON.stringify(info);
    return info;
  } catch {
    return safeJson.transform(info, {});
  }
});

export interface LoggerOptions {
  level?: string;
  service: string;
  /** Where JSON lines go; stdout by default (tests may pass a stream to assert on). */
  stream?: NodeJS.WritableStream;
}

/** JSON lines on stdout, with `service` on every line; `.child({requestId})` for per-request loggers. */
export function createLogger({ level = 'info', service, stream }: LoggerOptions): Logger {
  const logger = winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    defaultMeta: { service },
    format: fullFormat,
    transports: [stream ? new winston.transports.Stream({ stream }) : new winston.transports.Console()],
  });
  formats.set(logger, fullFormat);
  return logger;
}

/** The second `isoNow` last formatted, and its ISO text up to the milliseconds. */
let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * `new Date().toISOString()`, the date and time formatted once a second (formatting a date costs
 * about a microsecond, every log line has one).
 */
export function isoNow(now = Date.now()): string {
  const second = Math.floor(now / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, -4);
  }
  const ms = now - second * 1000;
  return `${isoPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

/**
 * With tracing on, the ids of the span the line was written in (`trace_id`, `span_id`: the names
 * of OpenTelemetry's log data model), so that a log line leads to its trace and back.
 */
function addSpanIds(fields: Record<string, unknown>): void {
  if (!tracingOn() || fields.trace_id) return;
  const ids = activeSpanIds();
  if (ids) Object.assign(fields, ids);
}

/** logform's `timestamp()` (an entry's own timestamp is kept), by `isoNow`; and the span's ids. */
const timestamp = winston.format((info) => {
  const fields = info as Record<string, unknown>;
  if (!fields.timestamp) fields.timestamp = isoNow();
  addSpanIds(fields);
  return info;
});

/** The format of every logger `createLogger` makes: timestamp, redaction, one JSON line. */
const fullFormat = winston.format.combine(timestamp(), redact(), jsonLine());
/** The loggers made by `createLogger` (whose format `logDirect` may take a shortcut through). */
const formats = new WeakMap<Logger, winston.Logform.Format>();

/**
 * The line `createLogger`'s format makes of an entry whose values are all strings, numbers or
 * booleans and whose keys name no secret — the usual access line — made without its steps:
 * the same timestamp, scrubbing and JSON. Any other entry goes through the format.
 */
function plainLine(info: winston.Logform.TransformableInfo): winston.Logform.TransformableInfo | boolean {
  const fields = info as Record<string, unknown>;
  if ('timestamp' in fields) return fullFormat.transform(info, {});
  for (const key in fields) {
    if (key === 'level') continue;
    const v = fields[key];
    if (isSecretKeyCached(key)) return fullFormat.transform(info, {});
    if (typeof v === 'string') fields[key] = scrubString(v);
    else if (typeof v !== 'number' && typeof v !== 'boolean') return fullFormat.transform(info, {});
  }
  fields.timestamp = isoNow();
  addSpanIds(fields);
  (info as Record<symbol, unknown>)[MESSAGE] = JSON.stringify(info);
  return info;
}

/** Keys already judged (the keys of logged entries are few and come from the code). */
const secretKeys = new Map<string, boolean>();
function isSecretKeyCached(key: string): boolean {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    secret = isSecretKey(key);
    if (secretKeys.size < 1000) secretKeys.set(key, secret);
  }
  return secret;
}

/** winston's key for an entry's level (triple-beam's `LEVEL`). */
const LEVEL = Symbol.for('level');
const noop = () => undefined;

/**
 * Writes one entry as `logger.log(level, message, fields)` would — the same format (timestamp,
 * redaction, one JSON line), the same transports and level checks — without winston's object
 * streams between them, which cost more than the line itself: for a line written on every request
 * (the API's access log).
 */
export function logDirect(
  logger: Logger,
  level: string,
  message: string,
  fields: Record<string, unknown>,
): void {
  if (logger.silent || !logger.isLevelEnabled(level)) return;
  const info = Object.assign({}, logger.defaultMeta as object, fields, { [LEVEL]: level, level, message });
  const line =
    logger.format === formats.get(logger)
      ? plainLine(info)
      : logger.format.transform(info, (logger.format as { options?: object }).options);
  if (!line) return;
  const rank = logger.levels[level]!;
  for (const transport of logger.transports) {
    if (transport.silent) continue;
    if (transport.level !== undefined && logger.levels[transport.level]! < rank) continue;
    transport.log?.(line, noop);
  }
}
