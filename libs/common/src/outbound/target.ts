import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { classifyAddress, type AllowList } from './address-policy.js';
import { OutboundRefusedError } from './errors.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (like `dns.lookup(host, { all: true })`). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true });

export interface TargetPolicy {
  allowList: AllowList;
  allowedPorts: ReadonlySet<number>;
  resolve: HostResolver;
}

/** A URL that passed every check, with the only addresses a socket may be opened to for it. */
export interface VettedTarget {
  url: URL;
  /** Host name as the URL has it, brackets removed: what Host, SNI and certificate checks use. */
  hostname: string;
  port: number;
  /** Canonical addresses, all checked; never empty. */
  addresses: ResolvedAddress[];
}

const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

export function parseTargetUrl(raw: string | URL, base?: URL): URL {
  try {
    // The WHATWG parser normalises numeric hosts (2130706433, 0x7f000001, 127.1, ...) to dotted quads before
    // anything is checked, so every notation reaches the classifier as the address a socket would use.
    return new URL(raw, base);
  } catch {
    throw new OutboundRefusedError('invalid_url', undefined, 'not a valid absolute URL');
  }
}

/**
 * Checks scheme, address and port of `url`, resolving its host exactly once. Every resolved address must pass:
 * one private answer among public ones refuses the whole request, since the socket could land on either.
 */
export async function vetTarget(url: URL, policy: TargetPolicy): Promise<VettedTarget> {
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const refuse = (reason: OutboundRefusedError['reason'], detail: string): never => {
    throw new OutboundRefusedError(reason, hostname, detail);
  };
  const defaultPort = DEFAULT_PORT[url.protocol];
  if (defaultPort === undefined) refuse('scheme_not_allowed', 'only http and https are allowed');
  // Credentials in the authority are a classic confusion trick (http://trusted@evil/); callers send headers instead.
  if (url.username || url.password) refuse('invalid_url', 'credentials in the URL are not allowed');
  if (!hostname) refuse('invalid_url', 'no host');

  const addresses = await resolveOnce(hostname, policy.resolve, refuse);
  const nameAllowed = policy.allowList.allowsHost(hostname);
  if (!nameAllowed) {
    for (const { address } of addresses) {
      const verdict = classifyAddress(address);
      if (!verdict.public && !policy.allowList.allowsAddress(address)) {
        refuse('private_address', `address range ${verdict.range} is not allowed`);
      }
    }
  }
  const port = url.port === '' ? (defaultPort as number) : Number(url.port);
  const portAllowed =
    policy.allowedPorts.has(port) ||
    nameAllowed ||
    addresses.every(({ address }) => policy.allowList.allowsAddress(address));
  if (!portAllowed) refuse('port_not_allowed', `port ${port} is not allowed`);
  return { url, hostname, port, addresses };
}

async function resolveOnce(
  hostname: string,
  resolve: HostResolver,
  refuse: (reason: 'unresolvable', detail: string) => never,
): Promise<ResolvedAddress[]> {
  if (isIP(hostname)) return [canonical(hostname, refuse)];
  let answers: ResolvedAddress[];
  try {
    answers = await resolve(hostname);
  } catch {
    return refuse('unresolvable', 'the host name does not resolve');
  }
  if (answers.length === 0) refuse('unresolvable', 'the host name has no address');
  return answers.map(({ address }) => canonical(address, refuse));
}

function canonical(
  address: string,
  refuse: (reason: 'unresolvable', detail: string) => never,
): ResolvedAddress {
  try {
    const { address: text } = classifyAddress(address);
    return { address: text, family: text.includes(':') ? 6 : 4 };
  } catch {
    return refuse('unresolvable', 'the resolver returned something that is not an address');
  }
}
