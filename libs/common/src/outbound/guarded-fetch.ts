import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { EMPTY_ALLOW_LIST, type AllowList } from './address-policy.js';
import {
  OutboundError,
  OutboundNetworkError,
  OutboundRefusedError,
  OutboundTimeoutError,
  OutboundTooLargeError,
} from './errors.js';
import {
  parseTargetUrl,
  systemResolver,
  vetTarget,
  type HostResolver,
  type ResolvedAddress,
  type TargetPolicy,
  type VettedTarget,
} from './target.js';

export interface OutboundClientOptions {
  /** Private hosts the operator allows (see {@link AllowList}). @defaultValue none */
  allowList?: AllowList;
  /** Ports a request may use; allow-listed hosts may use any port. @defaultValue [80, 443] */
  allowedPorts?: readonly number[];
  /** Redirects followed, each re-checked like the first URL; one more is an error. @defaultValue 3 */
  maxRedirects?: number;
  /** Budget for the whole exchange: resolution, every hop and the body. */
  timeoutMs: number;
  /** Cap on the response body, declared or counted. */
  maxBytes: number;
  /** Sent as User-Agent unless the request sets one. @defaultValue none */
  userAgent?: string;
  /** CAs trusted for https in addition to Node's bundled roots (e.g. a sandbox's self-signed CA). */
  ca?: string | Buffer | (string | Buffer)[];
  /** Replaces DNS, for tests. @defaultValue `dns.lookup(host, { all: true })` */
  lookup?: HostResolver;
}

export interface OutboundRequest {
  /** @defaultValue 'GET' */
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Overrides the client's budget for this request. */
  timeoutMs?: number;
  /** Overrides the client's cap for this request. */
  maxBytes?: number;
  /**
   * A device's proxy (its own agent, docs/proxies.md): every hop goes through it. The target is
   * still vetted here first, and the proxy is asked for the vetted address (not the name), so it
   * never resolves the name again; the proxy's own host is the operator's and not checked.
   */
  via?: http.Agent;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

export interface OutboundClient {
  /** Any status is a response, not an error; only policy, size, time and network failures throw an OutboundError. */
  fetch(url: string | URL, request?: OutboundRequest): Promise<OutboundResponse>;
  /** Runs every check of a first hop (resolution included) without connecting: for validating webhook URLs. */
  check(url: string | URL): Promise<{ url: string; addresses: string[] }>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Credentials meant for one origin must not follow a redirect to another.
const ORIGIN_BOUND_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

export function createOutboundClient(options: OutboundClientOptions): OutboundClient {
  const policy: TargetPolicy = {
    allowList: options.allowList ?? EMPTY_ALLOW_LIST,
    allowedPorts: new Set(options.allowedPorts ?? [80, 443]),
    resolve: options.lookup ?? systemResolver,
  };
  const maxRedirects = options.maxRedirects ?? 3;
  // An explicit `ca` replaces Node's store, so the bundled roots are added back for public hosts.
  const ca = options.ca === undefined ? undefined : [...rootCertificates, ...[options.ca].flat()];

  async function fetchOnce(url: string | URL, request: OutboundRequest, deadline: Deadline) {
    let current = parseTargetUrl(url);
    let method = (request.method ?? 'GET').toUpperCase();
    let body = request.body;
    const headers = lowerCaseHeaders(request.headers ?? {});
    if (options.userAgent && !headers['user-agent']) headers['user-agent'] = options.userAgent;
    const maxBytes = request.maxBytes ?? options.maxBytes;
    for (let redirects = 0; ; redirects += 1) {
      const target = await deadline.race(vetTarget(current, policy), current.hostname);
      const hop = await exchange(target, { method, headers, body, maxBytes, ca, via: request.via }, deadline);
      const location = hop.headers.location;
      if (!REDIRECTS.has(hop.status) || !location) return { ...hop, url: current.href };
      if (redirects >= maxRedirects) {
        throw new OutboundRefusedError(
          'too_many_redirects',
          target.hostname,
          `more than ${maxRedirects} redirects`,
        );
      }
      const next = parseTargetUrl(location, current);
      if (next.origin !== current.origin) for (const name of ORIGIN_BOUND_HEADERS) delete headers[name];
      if (hop.status === 303 || ((hop.status === 301 || hop.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      current = next;
    }
  }

  return {
    async fetch(url, request = {}) {
      const deadline = new Deadline(request.timeoutMs ?? options.timeoutMs);
      try {
        return await fetchOnce(url, request, deadline);
      } finally {
        deadline.clear();
      }
    },
    async check(url) {
      const parsed = parseTargetUrl(url);
      const deadline = new Deadline(options.timeoutMs);
      try {
        const target = await deadline.race(vetTarget(parsed, policy), parsed.hostname);
        return { url: target.url.href, addresses: target.addresses.map((a) => a.address) };
      } finally {
        deadline.clear();
      }
    },
  };
}

/** One timer for the whole exchange; every await in between races it. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  constructor(readonly timeoutMs: number) {
    this.timer = setTimeout(() => this.controller.abort(), timeoutMs);
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  /** Resolution cannot be cancelled, so it is abandoned instead when time runs out. */
  race<T>(work: Promise<T>, host: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(new OutboundTimeoutError(host, this.timeoutMs));
      if (this.signal.aborted) return onAbort();
      this.signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => this.signal.removeEventListener('abort', onAbort));
    });
  }
  clear(): void {
    clearTimeout(this.timer);
  }
}

interface HopRequest {
  method: string;
  headers: OutgoingHttpHeaders;
  body: string | Uint8Array | undefined;
  maxBytes: number;
  ca: (string | Buffer)[] | undefined;
  via: http.Agent | undefined;
}

/** Hands the socket the vetted addresses whatever name it asks for: DNS is never consulted a second time. */
const pinnedLookup =
  (addresses: ResolvedAddress[]): LookupFunction =>
  (_hostname, lookupOptions, callback) => {
    const first = addresses[0] as ResolvedAddress;
    if (lookupOptions.all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, addresses);
    else callback(null, first.address, first.family);
  };

/** One request/response on a vetted target; a redirect's body is discarded unread. */
function exchange(
  target: VettedTarget,
  req: HopRequest,
  deadline: Deadline,
): Promise<Omit<OutboundResponse, 'url'>> {
  const { hostname } = target;
  const isHttps = target.url.protocol === 'https:';
  const payload = req.body === undefined ? undefined : Buffer.from(req.body);
  const headers: OutgoingHttpHeaders = { ...req.headers };
  // The Host header is derived from the URL only: a caller-set one would address another virtual host.
  delete headers.host;
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  if (payload) headers['content-length'] = payload.length;
  // Through a proxy the vetted address is the host asked for (the pinned lookup is the proxy's, not
  // ours); the name stays in Host and in TLS (SNI and the certificate check).
  const address = (target.addresses[0] as ResolvedAddress).address;
  if (req.via) headers.host = target.url.host;
  const requestOptions: https.RequestOptions = {
    host: req.via ? address : hostname,
    ...(req.via && isHttps && !net.isIP(hostname) ? { servername: hostname } : {}),
    port: target.port,
    path: `${target.url.pathname}${target.url.search}`,
    method: req.method,
    headers,
    lookup: pinnedLookup(target.addresses),
    // A pooled socket would outlive the check that admitted it and could be handed to a later request whose name
    // now resolves elsewhere, so every request gets its own connection.
    agent: req.via ?? false,
    signal: deadline.signal,
    ...(isHttps && req.ca ? { ca: req.ca } : {}),
  };
  return new Promise((resolve, reject) => {
    const fail = (err: unknown): void => {
      if (err instanceof OutboundError) reject(err);
      else if (deadline.signal.aborted) reject(new OutboundTimeoutError(hostname, deadline.timeoutMs));
      else reject(new OutboundNetworkError(hostname, err));
    };
    const outgoing = (isHttps ? https : http).request(requestOptions, (res) => {
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status) && res.headers.location) {
        res.destroy();
        resolve({ status, headers: res.headers, body: Buffer.alloc(0) });
        return;
      }
      readCapped(res, hostname, req.maxBytes).then(
        (body) => resolve({ status, headers: res.headers, body }),
        (err: unknown) => {
          outgoing.destroy();
          fail(err);
        },
      );
    });
    outgoing.on('error', fail);
    outgoing.end(payload);
  });
}

async function readCapped(res: IncomingMessage, host: string, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw new OutboundTooLargeError(host, maxBytes);
  }
  // Counted as it arrives: a missing or lying Content-Length (chunked or close-delimited bodies) stops at the cap.
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      res.destroy();
      throw new OutboundTooLargeError(host, maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

function lowerCaseHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
