import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@mgw/common';
import { ERRORS, type Metrics } from '@mgw/contracts';
import { upgradeThroughApp } from './upgrade.js';

export interface HttpTimeouts {
  /** Longest time for a request's headers to arrive. */
  headersTimeoutMs: number;
  /** Longest time for a whole request (headers and body) to arrive. */
  requestTimeoutMs: number;
}

type ParserError = Error & { code?: string; reason?: string };

/** What the error envelope says for each error Node's HTTP parser answers itself. */
function describe({ code, reason = '' }: ParserError): { status: number; error: string; detail?: string } {
  const bad = (detail: string) => ({ status: 400, error: ERRORS.invalidRequest, detail });
  const conflictingLengths = bad(
    'Content-Length must not be sent together with Transfer-Encoding, nor twice',
  );
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: ERRORS.requestTimeout };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, error: ERRORS.headersTooLarge };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, error: ERRORS.chunkExtensionsTooLarge };
    case 'HPE_INVALID_METHOD':
      return bad('Unknown HTTP method');
    case 'HPE_INVALID_URL':
      return bad('Malformed request target: the path must be ASCII without spaces (percent-encode the rest)');
    case 'HPE_INVALID_CONSTANT':
      return bad('Malformed request line: a space in the path must be percent-encoded (%20)');
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return reason.includes('Content-Length') ? conflictingLengths : bad('Malformed chunked body');
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_EOF_STATE':
      return bad('Malformed chunked body');
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return conflictingLengths;
    case 'HPE_INVALID_CONTENT_LENGTH':
      return bad('Invalid Content-Length');
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return bad('Malformed header');
    case 'HPE_INVALID_VERSION':
      return bad('Unsupported HTTP version');
    default:
      return bad('Malformed HTTP request');
  }
}

/**
 * Connections whose request was answered while its body was still arriving (a refused body being
 * dropped, a body nobody reads): if the parser fails on them later, or their deadline passes,
 * nothing more is written — the client already has its answer.
 */
const answeredEarly = new WeakSet<Duplex>();

function trackEarlyAnswers(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (req.complete) return;
    answeredEarly.add(req.socket);
    req.once('end', () => answeredEarly.delete(req.socket));
  });
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
};

/**
 * Node's HTTP parser answers some requests itself, before express sees them (unknown method,
 * raw spaces or non-ASCII in the path, bad chunked encoding, conflicting lengths, headers over
 * 16 KB, request timeouts) — by default with an empty, non-JSON 400/408/413/431. This answers
 * them with the API's error envelope and a request id, like every other answer, then closes.
 */
export function clientErrorHandler(logger: Logger, metrics: Metrics) {
  const answered = new WeakSet<Duplex>();
  return (err: ParserError, socket: Duplex): void => {
    // The parser keeps failing on every later packet of a broken connection: answer once.
    if (answered.has(socket)) return;
    answered.add(socket);
    // The response in progress on this socket, if any (the field Node's own handler checks): once
    // its headers are out, another answer would corrupt the stream, so the connection is just cut.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent || answeredEarly.has(socket)) {
      socket.destroy();
      return;
    }
    const { status, error, detail } = describe(err);
    const requestId = randomUUID();
    const body = JSON.stringify({
      success: false,
      error,
      ...(detail === undefined ? {} : { details: [{ path: [], message: detail }] }),
    });
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
    // Give the client a moment to read the answer before unread input turns the close into a reset.
    setTimeout(() => socket.destroy(), 1000).unref();
    metrics.httpRequests.inc({ route: 'unparsed', method: 'unknown', status: String(status) });
    logger.info('request refused by the HTTP parser', { requestId, status, reason: err.code ?? err.name });
  };
}

/** What an express app sets as the prototype of every request and response it handles. */
interface AppPrototypes {
  request: object;
  response: object;
}

/**
 * Request and response objects made with the app's prototypes (`app.request`, `app.response`)
 * from the start. express sets them on every request it handles (`Object.setPrototypeOf`); on an
 * object made by Node's own classes that swaps its hidden class each time, and every property the
 * request's path writes to it afterwards (`statusCode`, `_header`, `body`, `route`, …) misses V8's
 * caches and takes the runtime's slow path: counted under callgrind, about a fifth of the main
 * thread's instructions per `POST /send` went to those misses (docs/benchmarks.md, issue 81).
 * Made with these prototypes, express's `setPrototypeOf` finds the prototype already there and
 * changes nothing. The objects are the same in every other way: Node's own constructors build
 * them. Node's `IncomingMessage` and `ServerResponse` are plain constructor functions (called
 * here on the new object); should a Node make them classes, nothing is changed.
 */
export function bornWithAppPrototypes(
  app: Partial<AppPrototypes>,
): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  const { request, response } = app;
  const isClass = (f: unknown) => /^class\b/.test(Function.prototype.toString.call(f));
  if (!request || !response || isClass(http.IncomingMessage) || isClass(http.ServerResponse)) return {};
  const construct = http.IncomingMessage as unknown as (this: object, ...args: unknown[]) => void;
  const respond = http.ServerResponse as unknown as (this: object, ...args: unknown[]) => void;
  function AppRequest(this: object, ...args: unknown[]) {
    construct.apply(this, args);
  }
  AppRequest.prototype = request;
  function AppResponse(this: object, ...args: unknown[]) {
    respond.apply(this, args);
  }
  AppResponse.prototype = response;
  return {
    IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
  };
}

/**
 * The API's HTTP server: slow clients are closed in seconds rather than Node's minutes (headers
 * and whole-request deadlines, checked often enough to matter), and parser errors get JSON.
 */
export function createHttpServer(
  app: RequestListener & Partial<AppPrototypes>,
  timeouts: HttpTimeouts,
  logger: Logger,
  metrics: Metrics,
): http.Server {
  const server = http.createServer({
    ...bornWithAppPrototypes(app),
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    // Node checks both deadlines only this often (default 30 s, which would triple a 10 s one).
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4))),
  });
  // An idle keep-alive connection stays open 65 s (Node's default is 5 s): longer than the proxies
  // in front keep theirs (ingress-nginx 60 s, cloud load balancers 60 s) and than fetch's 4 s, so
  // the client side always closes an idle connection first. With 5 s, a client (or a proxy)
  // reusing a connection just as the server closed it gets a reset request: a 502, or "fetch failed".
  server.keepAliveTimeout = 65_000;
  server.on('request', trackEarlyAnswers);
  server.on('request', app);
  server.on('clientError', clientErrorHandler(logger, metrics));
  // WebSocket upgrades (GET /events/ws) go through the app like any request.
  server.on('upgrade', upgradeThroughApp(server, app));
  return server;
}
