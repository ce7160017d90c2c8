/**
 * The Graph API's errors, and what each means for a message (docs/cloud-api.md "Reasons").
 *
 * Shape: `{ error: { message, type, code, error_subcode?, error_data: { details }, fbtrace_id } }`
 * (https://developers.facebook.com/docs/graph-api/guides/error-handling). Codes:
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/
 */
import { OutboundRefusedError } from '@mgw/common';
import { FAILURE_REASONS, type FailureReason } from '@mgw/contracts';

/** An answer of the Graph API that is an error: what Meta said, nothing of the request. */
export class GraphError extends Error {
  override name = 'GraphError';
  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** Meta's error code (0 when the answer had none). */
    readonly code: number,
    message: string,
    readonly subcode?: number,
    /** `error_data.details`: what was wrong, in Meta's words. */
    readonly details?: string,
    readonly fbtraceId?: string,
  ) {
    super(message);
  }
}

/**
 * No answer: the request was refused by the guard, or the connection failed, or no answer came in
 * time. `reached` is false only when the request certainly never left (refused before any
 * connection, or the connection itself refused): otherwise Meta may have acted on it.
 */
export class GraphUnreachableError extends Error {
  override name = 'GraphUnreachableError';
  readonly reached: boolean;
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.reached = !neverLeft(options.cause);
  }
}

/** A file over the download's bound: refused as Meta named its size, or cut off as it came. */
export class MediaTooLargeError extends Error {
  override name = 'MediaTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`The media is larger than ${maxBytes} bytes`);
  }
}

function neverLeft(cause: unknown): boolean {
  if (cause instanceof OutboundRefusedError) return true;
  const code = (cause as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH';
}

/** A Graph error answer's body, read defensively (anything else is an error of its HTTP status). */
export function graphErrorOf(status: number, body: unknown): GraphError {
  const e = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (!e || typeof e !== 'object') return new GraphError(status, 0, `The Graph API answered ${status}`);
  const num = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
  const str = (v: unknown, max: number) => (typeof v === 'string' ? v.slice(0, max) : undefined);
  const data = e.error_data as { details?: unknown } | undefined;
  return new GraphError(
    status,
    num(e.code) ?? 0,
    str(e.message, 300) ?? `The Graph API answered ${status}`,
    num(e.error_subcode),
    str(data?.details, 500),
    str(e.fbtrace_id, 64),
  );
}

/** What a Graph error means for the message that met it. */
export interface GraphVerdict {
  /** The message's reason if it fails with this (now, or once its retries are spent). */
  reason: FailureReason;
  /** Worth another attempt later (rate limits, Meta's passing failures). */
  retry: boolean;
  /** The device's credentials no longer work: it turns `disconnected`, its messages wait. */
  disconnect?: true;
}

/** Code -> verdict: one row per code the error-code reference names that a send can meet. */
export const GRAPH_CODES: Readonly<Record<number, GraphVerdict>> = {
  // Authorization: the token expired, was revoked, or lacks the permission.
  0: { reason: FAILURE_REASONS.cloudTokenExpired, retry: false, disconnect: true },
  10: { reason: FAILURE_REASONS.cloudTokenExpired, retry: false, disconnect: true },
  190: { reason: FAILURE_REASONS.cloudTokenExpired, retry: false, disconnect: true },
  // Throttling: the app's, the account's, the number's throughput.
  4: { reason: FAILURE_REASONS.rateLimited, retry: true },
  80007: { reason: FAILURE_REASONS.rateLimited, retry: true },
  130429: { reason: FAILURE_REASONS.rateLimited, retry: true },
  131056: { reason: FAILURE_REASONS.pairRateLimited, retry: true },
  // Meta's passing failures.
  1: { reason: FAILURE_REASONS.sendFailed, retry: true },
  2: { reason: FAILURE_REASONS.sendFailed, retry: true },
  131000: { reason: FAILURE_REASONS.sendFailed, retry: true },
  131016: { reason: FAILURE_REASONS.sendFailed, retry: true },
  133004: { reason: FAILURE_REASONS.sendFailed, retry: true },
  // The message's own.
  131047: { reason: FAILURE_REASONS.windowClosed, retry: false },
  131048: { reason: FAILURE_REASONS.messagingLimitReached, retry: false },
  131049: { reason: FAILURE_REASONS.undeliverable, retry: false },
  131026: { reason: FAILURE_REASONS.undeliverable, retry: false },
  131052: { reason: FAILURE_REASONS.attachmentUnreachable, retry: false },
  131053: { reason: FAILURE_REASONS.rejectedByServer, retry: false },
  132000: { reason: FAILURE_REASONS.templateParamsInvalid, retry: false },
  132005: { reason: FAILURE_REASONS.templateParamsInvalid, retry: false },
  132007: { reason: FAILURE_REASONS.templateParamsInvalid, retry: false },
  132012: { reason: FAILURE_REASONS.templateParamsInvalid, retry: false },
  132001: { reason: FAILURE_REASONS.templateNotFound, retry: false },
  132016: { reason: FAILURE_REASONS.templateNotFound, retry: false },
  132015: { reason: FAILURE_REASONS.templatePaused, retry: false },
  // The number: blocked, locked, restricted, not registered, unpaid.
  368: { reason: FAILURE_REASONS.numberBlocked, retry: false },
  130497: { reason: FAILURE_REASONS.numberBlocked, retry: false },
  131031: { reason: FAILURE_REASONS.numberBlocked, retry: false },
  131042: { reason: FAILURE_REASONS.numberBlocked, retry: false },
  133010: { reason: FAILURE_REASONS.numberBlocked, retry: false },
};

/**
 * The verdict of a Graph error: its code's row; else by status (a 5xx is Meta's passing failure,
 * a 429 a rate limit, the 200–299 codes are permissions), else the server's refusal of the message.
 */
export function graphVerdict(err: GraphError): GraphVerdict {
  const row = Object.hasOwn(GRAPH_CODES, err.code) ? GRAPH_CODES[err.code] : undefined;
  if (row) return row;
  if (err.code >= 200 && err.code <= 299) return GRAPH_CODES[10]!;
  if (err.status === 401) return GRAPH_CODES[190]!;
  if (err.status === 429) return GRAPH_CODES[4]!;
  if (err.status >= 500) return GRAPH_CODES[1]!;
  return { reason: FAILURE_REASONS.rejectedByServer, retry: false };
}
