import ipaddr from 'ipaddr.js';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** Why an address is (not) reachable from the outbound client. Bounded: usable in logs and metrics. */
export type AddressRange =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'carrier_grade_nat'
  | 'unique_local'
  | 'site_local'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'ipv4_mapped'
  | 'ipv4_compatible'
  | 'nat64'
  | '6to4'
  | 'teredo'
  | 'translation'
  | 'not_global_unicast';

export interface AddressClassification {
  /** Canonical text of the address (RFC 5952 for IPv6). */
  address: string;
  range: AddressRange;
  /** True when the client may connect to it without an allow-list entry. */
  public: boolean;
  /** For the forms that embed an IPv4 address (mapped, NAT64, 6to4): how that address classifies. */
  embedded?: AddressClassification;
}

/** Every IPv4 range the client refuses; the first match names the range (broadcast before 240/4). */
export const REFUSED_IPV4_RANGES: readonly (readonly [cidr: string, range: AddressRange])[] = [
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier_grade_nat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link_local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.31.196.0/24', 'reserved'],
  ['192.52.193.0/24', 'reserved'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['192.175.48.0/24', 'reserved'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
];

/**
 * IPv6 is judged the other way round: only global unicast (2000::/3) can be public, so unallocated space and the
 * deprecated IPv4-compatible form (::a.b.c.d) are refused without being listed. These rows name what is refused
 * outside 2000::/3 and carve the non-public blocks out of it. NAT64 and 6to4 are decided by their embedded IPv4.
 */
export const REFUSED_IPV6_RANGES: readonly (readonly [cidr: string, range: AddressRange])[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'ipv4_mapped'],
  ['::/96', 'ipv4_compatible'],
  ['::ffff:0:0:0/96', 'translation'],
  ['64:ff9b::/96', 'nat64'],
  ['64:ff9b:1::/48', 'translation'],
  ['100::/64', 'reserved'],
  ['5f00::/16', 'reserved'],
  ['fc00::/7', 'unique_local'],
  ['fe80::/10', 'link_local'],
  ['fec0::/10', 'site_local'],
  ['ff00::/8', 'multicast'],
  ['2001::/32', 'teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:db8::/32', 'documentation'],
  ['2001::/23', 'reserved'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'reserved'],
  ['3fff::/20', 'documentation'],
];

const parseTable = (rows: typeof REFUSED_IPV4_RANGES): [Ip, number, AddressRange][] =>
  rows.map(([cidr, range]) => [...ipaddr.parseCIDR(cidr), range]);
const IPV4_TABLE = parseTable(REFUSED_IPV4_RANGES);
const IPV6_TABLE = parseTable(REFUSED_IPV6_RANGES);

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

const DOTTED_TAIL = /(?<=:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/** Parses only canonical notations (four-part decimal IPv4, standard IPv6); odd forms belong to the URL parser. */
export function parseIp(text: string): Ip | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  // ipaddr.js reads the deprecated ::a.b.c.d as ::ffff:a.b.c.d; spelling the tail in hex keeps it what RFC 4291 says.
  const tail = DOTTED_TAIL.exec(bare)?.[1];
  if (tail !== undefined && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return undefined;
  const hex = tail === undefined ? bare : bare.replace(DOTTED_TAIL, v4ToHexGroups(tail));
  if (ipaddr.IPv6.isValid(hex)) return ipaddr.IPv6.parse(hex);
  return undefined;
}

const v4ToHexGroups = (dotted: string): string => {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
};

const ipText = (ip: Ip): string =>
  ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString();

const v4FromBytes = (bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes);

function findRange(ip: Ip): AddressRange | undefined {
  const rows = ip.kind() === 'ipv4' ? IPV4_TABLE : IPV6_TABLE;
  for (const [net, bits, range] of rows) {
    if (net.kind() === ip.kind() && ip.match(net, bits)) return range;
  }
  return undefined;
}

function classifyIp(ip: Ip): AddressClassification {
  const address = ipText(ip);
  const range = findRange(ip);
  if (ip.kind() === 'ipv4') return { address, range: range ?? 'public', public: range === undefined };
  const bytes = ip.toByteArray();
  // Forms that carry an IPv4 address inherit its verdict, except mapped: a socket to ::ffff:a.b.c.d reaches a.b.c.d
  // on this host's own stack, which no public service needs, so it is refused whatever it embeds.
  const embeddedAt = range === 'ipv4_mapped' || range === 'nat64' ? 12 : range === '6to4' ? 2 : undefined;
  if (embeddedAt !== undefined && range !== undefined) {
    const embedded = classifyIp(v4FromBytes(bytes.slice(embeddedAt, embeddedAt + 4)));
    return { address, range, public: range !== 'ipv4_mapped' && embedded.public, embedded };
  }
  if (range !== undefined) return { address, range, public: false };
  if (!ip.match(GLOBAL_UNICAST)) return { address, range: 'not_global_unicast', public: false };
  return { address, range: 'public', public: true };
}

/** Classifies a canonical IPv4 or IPv6 address; throws on anything else (use the URL parser for odd notations). */
export function classifyAddress(address: string): AddressClassification {
  const ip = parseIp(address);
  if (!ip) throw new TypeError('not an IP address');
  return classifyIp(ip);
}

export function isPublicAddress(address: string): boolean {
  const ip = parseIp(address);
  return ip !== undefined && classifyIp(ip).public;
}

/**
 * Hosts an operator lets the client reach although they are private (ALLOWED_PRIVATE_HOSTS).
 *
 * Semantics: a request whose URL host name is on the list may use whatever addresses that name resolves to, and any
 * port; a request to any other host may use a non-public address only if that address lies in a listed IP or CIDR,
 * and may use a port outside `allowedPorts` only if every address it resolved to lies in one. Host names match
 * exactly (case-insensitive, trailing dot ignored): there are no wildcards, so `example.com` does not cover
 * `api.example.com`. An IPv4-mapped IPv6 address is also matched by the IPv4 entries covering the address it embeds.
 */
export interface AllowList {
  /** Canonical entries, for a start-up log line. */
  readonly entries: readonly string[];
  allowsHost(hostname: string): boolean;
  allowsAddress(address: string): boolean;
  /** True when some address entry exists (a port outside the policy may then be allowed after resolution). */
  readonly hasAddressEntries: boolean;
}

const normaliseHostName = (host: string): string => {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, '');
};

function createAllowList(names: Set<string>, nets: [Ip, number][]): AllowList {
  const inNets = (ip: Ip): boolean =>
    nets.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  return {
    entries: [...names, ...nets.map(([net, bits]) => `${ipText(net)}/${bits}`)],
    hasAddressEntries: nets.length > 0,
    allowsHost: (hostname) => names.has(normaliseHostName(hostname)),
    allowsAddress: (address) => {
      const ip = parseIp(address);
      if (!ip) return false;
      if (inNets(ip)) return true;
      return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
        ? inNets((ip as ipaddr.IPv6).toIPv4Address())
        : false;
    },
  };
}

export const EMPTY_ALLOW_LIST: AllowList = createAllowList(new Set(), []);

const HOST_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const FORBIDDEN_IN_NAME = /[\s:@/?#*[\]\\%]/;

function parseEntry(entry: string, fail: (why: string) => never): { name: string } | { net: [Ip, number] } {
  if (entry.includes('/')) {
    const [addr = '', bits = '', ...rest] = entry.split('/');
    const ip = parseIp(addr);
    if (!ip || rest.length > 0 || !/^\d{1,3}$/.test(bits)) fail('is not a valid CIDR');
    const prefix = Number(bits);
    if (prefix > (ip.kind() === 'ipv4' ? 32 : 128)) fail('has a prefix length out of range');
    return { net: [ip, prefix] };
  }
  const literal = parseIp(entry);
  if (literal) return { net: [literal, literal.kind() === 'ipv4' ? 32 : 128] };
  if (FORBIDDEN_IN_NAME.test(entry))
    fail('is not a host name, an IP address or a CIDR (no ports, paths or wildcards)');
  let host: string;
  try {
    // The URL parser is what fetch uses: IDN, case and numeric IPv4 notations normalise the same way here.
    host = new URL(`http://${entry}/`).hostname;
  } catch {
    fail('is not a host name, an IP address or a CIDR');
  }
  const asIp = parseIp(host);
  if (asIp) return { net: [asIp, asIp.kind() === 'ipv4' ? 32 : 128] };
  const name = normaliseHostName(host);
  if (name.length > 253 || !name.split('.').every((label) => HOST_LABEL.test(label)))
    fail('is not a valid host name');
  return { name };
}

/**
 * Parses a comma-separated list of host names, IP addresses and CIDRs (IPv4 and IPv6). Blank entries are ignored.
 * @throws Error naming `variable` and the offending entry, so a service fails fast at start-up.
 */
export function parseAllowedPrivateHosts(
  text: string | undefined,
  variable = 'ALLOWED_PRIVATE_HOSTS',
): AllowList {
  const names = new Set<string>();
  const nets: [Ip, number][] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const parsed = parseEntry(entry, (why) => {
      throw new Error(`${variable}: entry "${entry}" ${why}`);
    });
    if ('name' in parsed) names.add(parsed.name);
    else nets.push(parsed.net);
  }
  return createAllowList(names, nets);
}
