import type http from 'node:http';
import type net from 'node:net';
import type { AgentConnectOpts } from 'agent-base';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import type { ProxyErrorKind } from '@mgw/contracts';
import type { RedisClient } from '@mgw/common';
import { DeviceProxyStore, type Encryption, type ProxyUrl } from '@mgw/store';

export interface ProxyFailure {
  kind: ProxyErrorKind;
  /** The agent's message, with no credential in it (the agents never put the URL in one). */
  message: string;
}

/** The agent of one device's proxy, and the last failure it saw (read by the device's socket). */
export interface DeviceProxyAgent {
  /** For the WebSocket (`agent`) and media upload (`fetchAgent`): every connection of the device. */
  agent: http.Agent;
  /** `scheme://host:port`, for logs and the status (never with credentials). */
  where: string;
  /** The failure since the last call, if any (then forgotten). */
  takeFailure(): ProxyFailure | undefined;
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Classifies an error a proxy agent threw while connecting. */
export function proxyErrorKind(err: unknown): ProxyErrorKind {
  const code = (err as { code?: string } | undefined)?.code;
  if (code && UNREACHABLE.has(code)) return 'unreachable';
  const message = String((err as Error | undefined)?.message ?? '');
  // The socks package says a refused connection to the proxy in its message only.
  if ([...UNREACHABLE].some((c) => message.includes(c))) return 'unreachable';
  // The socks package's messages: "Socks5 Authentication failed", "no accepted authentication type".
  if (/authentication/i.test(message)) return 'auth';
  if (/Socks5 proxy rejected connection|ruleset|not allowed/i.test(message)) return 'refused';
  if (/Proxy connection timed out|Socket closed|ECONNRESET/i.test(message)) return 'unreachable';
  return 'error';
}

/**
 * Builds the agent for a device's proxy with `https-proxy-agent` (HTTP CONNECT) or
 * `socks-proxy-agent` (SOCKS5; host names are resolved by the proxy, `socks5h`, so the device's
 * DNS look-ups come from the proxy's side too). `tls` (the sandbox's media CA) applies to the
 * targets reached through it. Failures are remembered for the device's status.
 */
export function createProxyAgent(proxy: ProxyUrl, tls: { ca?: string } = {}): DeviceProxyAgent {
  let failure: ProxyFailure | undefined;
  const remember = (kind: ProxyErrorKind, message: string): void => {
    failure = { kind, message };
  };
  const tracking: Tracking = { remember, targetTls: tls.ca ? { ca: tls.ca } : {} };
  const agent: http.Agent =
    proxy.scheme === 'http'
      ? new TrackedHttpsProxyAgent(proxy.href, tracking)
      : new TrackedSocksProxyAgent(proxy.href.replace(/^socks5:/, 'socks5h:'), tracking);
  return {
    agent,
    where: `${proxy.scheme}://${proxy.host}:${proxy.port}`,
    takeFailure: () => {
      const f = failure;
      failure = undefined;
      return f;
    },
  };
}

/**
 * The proxy a device connects through now: its own (set through the admin API, sealed), none when
 * it is set to connect directly, else DEVICE_PROXY_URL, else none. A fresh agent each time, so no connection outlives a change. Read by
 * the sender at every (re)connect and by the connection service for a pairing.
 */
export async function loadDeviceProxy(deps: {
  redis: RedisClient;
  encryption: Encryption;
  deviceId: string;
  defaultProxy?: ProxyUrl;
  /** The sandbox's media CA, trusted for targets reached through the proxy. */
  ca?: string;
}): Promise<DeviceProxyAgent | undefined> {
  const own = await new DeviceProxyStore(deps.redis, deps.encryption).setting(deps.deviceId);
  const proxy = own ? (own.direct ? undefined : own.proxy) : deps.defaultProxy;
  return proxy ? createProxyAgent(proxy, deps.ca ? { ca: deps.ca } : {}) : undefined;
}

type Remember = (kind: ProxyErrorKind, message: string) => void;

/**
 * A connection through the proxy failed. Thrown instead of the agent's own error, which may carry
 * the proxy's options, credentials included (the socks package's SocksClientError does), into
 * whatever logs it.
 */
export class ProxyConnectError extends Error {
  override name = 'ProxyConnectError';
  constructor(
    readonly kind: ProxyErrorKind,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

function failed(err: unknown, remember: Remember): ProxyConnectError {
  const kind = proxyErrorKind(err);
  const code = (err as { code?: unknown } | undefined)?.code;
  const message = `proxy ${kind}: ${String((err as Error | undefined)?.message ?? err)}`;
  remember(kind, message);
  return new ProxyConnectError(kind, message, typeof code === 'string' ? code : undefined);
}

/** What a device's proxy agent needs besides its URL. */
interface Tracking {
  remember: Remember;
  /**
   * TLS options for the targets (the sandbox's media CA): https-proxy-agent drops an agent's own
   * options, so they are added to each connection's.
   */
  targetTls: { ca?: string };
}

class TrackedHttpsProxyAgent extends HttpsProxyAgent<string> {
  constructor(
    url: string,
    private readonly tracking: Tracking,
  ) {
    super(url, { keepAlive: false });
  }

  /**
   * A CONNECT the proxy did not answer 200 fails the connection here. (The agent would hand the
   * proxy's answer to the client as the target's; Baileys listens for ws's `unexpected-response`
   * and never ends such a socket, so the device would hang instead of retrying.)
   */
  override async connect(req: http.ClientRequest, opts: AgentConnectOpts): Promise<net.Socket> {
    let answer: { statusCode: number; statusText?: string } | undefined;
    const onAnswer = (res: { statusCode: number; statusText?: string }): void => {
      answer = res;
    };
    req.once('proxyConnect', onAnswer);
    const socket = await tracked(() => super.connect(req, opts), opts, this.tracking).finally(() =>
      req.off('proxyConnect', onAnswer),
    );
    if (!answer || answer.statusCode === 200) return socket;
    socket.destroy();
    // tinyproxy answers 401 to wrong BasicAuth credentials, the standard is 407.
    const kind: ProxyErrorKind = answer.statusCode === 407 || answer.statusCode === 401 ? 'auth' : 'refused';
    const message = `proxy ${kind}: the proxy answered CONNECT with ${answer.statusCode}${answer.statusText ? ' ' + answer.statusText : ''}`;
    this.tracking.remember(kind, message);
    throw new ProxyConnectError(kind, message);
  }
}

class TrackedSocksProxyAgent extends SocksProxyAgent {
  constructor(
    url: string,
    private readonly tracking: Tracking,
  ) {
    super(url, { keepAlive: false });
  }

  override connect(req: http.ClientRequest, opts: AgentConnectOpts): Promise<net.Socket> {
    return tracked(() => super.connect(req, opts), opts, this.tracking);
  }
}

/** One connection through the proxy: the targets' TLS options added, a failure remembered and cleaned. */
async function tracked(
  connect: () => Promise<net.Socket>,
  opts: AgentConnectOpts,
  tracking: Tracking,
): Promise<net.Socket> {
  Object.assign(opts, { ...tracking.targetTls, ...opts });
  try {
    return await connect();
  } catch (err) {
    throw failed(err, tracking.remember);
  }
}
