import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ERRORS, type ValidationDetail } from '@mgw/contracts';
import { isRedisUnavailableError, serializeError, type Logger } from '@mgw/common';

/** The one error type that carries an HTTP status and the spec's body `{success:false, error, details?}`. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly error: string,
    readonly details?: unknown,
    /** Extra body fields, e.g. `resetIn` on 429 or `messageId` on an OTP timeout. */
    readonly extra?: Record<string, unknown>,
  ) {
    super(error);
  }

  static invalid(details: ValidationDetail[]): ApiError {
    return new ApiError(400, ERRORS.invalidRequest, details);
  }

  body(): Record<string, unknown> {
    return {
      success: false,
      error: this.error,
      ...(this.details === undefined ? {} : { details: this.details }),
      ...this.extra,
    };
  }
}

/** Maps anything thrown to an ApiError; unknown errors become a 500 without internals. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { status?: number; statusCode?: number };
  // Other client errors the HTTP layer raises itself (e.g. a malformed %-escape in the path).
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return ApiError.invalid([{ path: [], message: 'Malformed request' }]);
  }
  if (isRedisUnavailableError(err)) return new ApiError(503, ERRORS.serviceUnavailable);
  return new ApiError(500, ERRORS.internal);
}

export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new ApiError(404, ERRORS.notFound));
};

/**
 * The answer of each API base to a path no route has, once the credentials are checked: 404 `Not
 * found`, or 400 `Malformed request` for a path whose escapes are not UTF-8 (canonical-path.ts
 * marks it: a client's bug worth naming, docs/api.md).
 */
export const noSuchPath: RequestHandler = (_req, res, next) => {
  next(
    res.locals.malformedPath
      ? ApiError.invalid([{ path: [], message: 'Malformed request' }])
      : new ApiError(404, ERRORS.notFound),
  );
};

/** A known path called with a method it does not serve: 405 with the methods it does. */
export function methodNotAllowed(allow: string): RequestHandler {
  return (_req, res, next) => {
    res.setHeader('Allow', allow);
    next(new ApiError(405, ERRORS.methodNotAllowed));
  };
}

/** Registered last: every failure leaves as JSON; 5xx are logged with the error, never returned. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err);
    const log = (req as { log?: Logger }).log ?? logger;
    if (apiError.status >= 500) {
      log.error('request failed', { status: apiError.status, err: serializeError(err) });
    }
    if (res.headersSent) return;
    res.status(apiError.status).json(apiError.body());
  };
}
