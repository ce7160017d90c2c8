/**
 * Errors of the outbound client. Each carries a bounded machine-readable `reason` (safe as a metric label) and the
 * host it concerns. Messages name the host only: URLs given by clients may carry tokens in their path or query.
 */
export type OutboundRefusalReason =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'port_not_allowed'
  | 'private_address'
  | 'too_many_redirects'
  | 'unresolvable';

export type OutboundErrorReason = OutboundRefusalReason | 'too_large' | 'timeout' | 'network';

export abstract class OutboundError extends Error {
  abstract readonly reason: OutboundErrorReason;
  /** The URL's host name (no port, path or query); undefined when the URL did not parse. */
  readonly host: string | undefined;

  protected constructor(message: string, host: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.host = host;
  }
}

/** The request was not made (or a redirect was not followed) because the policy forbids it. */
export class OutboundRefusedError extends OutboundError {
  override name = 'OutboundRefusedError';
  constructor(
    readonly reason: OutboundRefusalReason,
    host: string | undefined,
    detail: string,
  ) {
    super(
      host === undefined ? `outbound request refused: ${detail}` : `request to ${host} refused: ${detail}`,
      host,
    );
  }
}

/** The body (declared or counted while reading) exceeded the byte cap; reading stopped there. */
export class OutboundTooLargeError extends OutboundError {
  override name = 'OutboundTooLargeError';
  readonly reason = 'too_large';
  constructor(
    host: string,
    readonly maxBytes: number,
  ) {
    super(`response from ${host} exceeds ${maxBytes} bytes`, host);
  }
}

/** The whole exchange (resolution, every redirect hop and the body) did not finish within the time budget. */
export class OutboundTimeoutError extends OutboundError {
  override name = 'OutboundTimeoutError';
  readonly reason = 'timeout';
  constructor(
    host: string,
    readonly timeoutMs: number,
  ) {
    super(`request to ${host} did not finish within ${timeoutMs} ms`, host);
  }
}

/** Connection, TLS or protocol failure. `code` is the Node error code (e.g. ECONNREFUSED), never a URL. */
export class OutboundNetworkError extends OutboundError {
  override name = 'OutboundNetworkError';
  readonly reason = 'network';
  readonly code: string | undefined;
  constructor(host: string, cause: unknown) {
    const code = (cause as { code?: unknown } | undefined)?.code;
    const safeCode = typeof code === 'string' ? code : undefined;
    super(`request to ${host} failed${safeCode ? `: ${safeCode}` : ''}`, host, { cause });
    this.code = safeCode;
  }
}
