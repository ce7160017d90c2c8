import type { ErrorRequestHandler, NextFunction, RequestHandler } from 'express';

/**
 * A route's chain (its guard, limit, body and handler, then the error handlers that follow it) run
 * as one express handler: the same functions in the same order with the same `next` contract as
 * express's own route dispatch — a call with an error skips to the error handlers, a thrown error
 * or a rejected promise is an error — without a router layer, a match and a promise check of
 * express's per step. What leaves the chain goes on to the app's next layer, as it would have.
 *
 * Used for every route (route-table.ts): the busiest routes are mounted first, before the path
 * middleware, and their whole chain is this one layer (issue 81, docs/benchmarks.md).
 */
export function oneLayer(
  handlers: readonly RequestHandler[],
  onError: readonly ErrorRequestHandler[] = [],
): RequestHandler {
  if (handlers.length === 1 && onError.length === 0) return handlers[0]!;
  return (req, res, out) => {
    let step = 0;
    let failed = 0;
    const fail = (err: unknown): void => {
      // An error handler that calls `next()` without one has dealt with it: the chain is left.
      if (err === undefined || err === null) return out();
      const handle = onError[failed++];
      if (!handle) return out(err);
      try {
        settle(handle(err, req, res, fail as NextFunction), fail);
      } catch (thrown) {
        fail(thrown);
      }
    };
    const next = (err?: unknown): void => {
      // express's `next('route')` leaves the route; `next('router')` too, as far as a route can.
      if (err === 'route' || err === 'router') return out(err);
      if (err !== undefined && err !== null) return fail(err);
      const handle = handlers[step++];
      if (!handle) return out();
      try {
        settle(handle(req, res, next as NextFunction), fail);
      } catch (thrown) {
        fail(thrown);
      }
    };
    next();
  };
}

/** A handler's promise, if it returned one: its rejection is the chain's error (express 5 does the same). */
function settle(result: unknown, fail: (err: unknown) => void): void {
  if (
    result !== null &&
    typeof result === 'object' &&
    typeof (result as Promise<unknown>).then === 'function'
  )
    (result as Promise<unknown>).then(undefined, (err: unknown) =>
      fail(err ?? new Error('Rejected promise')),
    );
}
