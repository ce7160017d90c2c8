import { expect } from 'chai';
import ipaddr from 'ipaddr.js';
import {
  classifyAddress,
  isPublicAddress,
  parseAllowedPrivateHosts,
  REFUSED_IPV4_RANGES,
  REFUSED_IPV6_RANGES,
} from '../../src/index.js';

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '9.9.9.9',
  '100.63.255.255', // just below CGNAT
  '100.128.0.0', // just above CGNAT
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '223.255.255.255',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001::1',
  '64:ff9b::808:808', // NAT64 of 8.8.8.8: what DNS64 hands an IPv6-only host
  '2002:808:808::1', // 6to4 of 8.8.8.8
];

// [address, expected range]
const REFUSED: [string, string][] = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'carrier_grade_nat'],
  ['100.127.255.255', 'carrier_grade_nat'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link_local'], // cloud metadata
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.88.99.1', 'reserved'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'ipv4_mapped'],
  ['::ffff:10.0.0.1', 'ipv4_mapped'],
  ['::ffff:8.8.8.8', 'ipv4_mapped'], // mapped forms are refused whatever they embed
  ['::127.0.0.1', 'ipv4_compatible'],
  ['::8.8.8.8', 'ipv4_compatible'],
  ['::7f00:1', 'ipv4_compatible'],
  ['::ffff:0:7f00:1', 'translation'],
  ['64:ff9b::7f00:1', 'nat64'],
  ['64:ff9b::a9fe:a9fe', 'nat64'],
  ['64:ff9b:1::1', 'translation'],
  ['100::1', 'reserved'],
  ['fc00::1', 'unique_local'],
  ['fd12:3456::1', 'unique_local'],
  ['fe80::1', 'link_local'],
  ['febf:ffff::1', 'link_local'],
  ['fec0::1', 'site_local'],
  ['ff02::1', 'multicast'],
  ['2001::1', 'teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  ['2001:2::1', 'benchmarking'],
  ['2001:db8::1', 'documentation'],
  ['2001:10::1', 'reserved'], // ORCHID, inside 2001::/23
  ['2002:7f00:1::1', '6to4'],
  ['2002:a00:1::1', '6to4'],
  ['2002:c0a8:101::', '6to4'],
  ['3fff::1', 'documentation'],
  ['5f00::1', 'reserved'],
  ['4000::1', 'not_global_unicast'],
  ['1::1', 'not_global_unicast'],
];

describe('outbound: address classification', () => {
  for (const address of PUBLIC) {
    it(`When the address is ${address}, then it is public`, () => {
      expect(classifyAddress(address).public).to.equal(true);
      expect(isPublicAddress(address)).to.equal(true);
    });
  }

  for (const [address, range] of REFUSED) {
    it(`When the address is ${address}, then it is refused as ${range}`, () => {
      expect(classifyAddress(address)).to.include({ range, public: false });
      expect(isPublicAddress(address)).to.equal(false);
    });
  }

  it('When a refused form embeds an IPv4 address, then the embedded verdict is reported', () => {
    expect(classifyAddress('::ffff:127.0.0.1').embedded).to.include({
      address: '127.0.0.1',
      range: 'loopback',
    });
    expect(classifyAddress('64:ff9b::a00:1').embedded).to.include({ address: '10.0.0.1', range: 'private' });
    expect(classifyAddress('2002:a9fe:a9fe::1').embedded).to.include({ range: 'link_local' });
  });

  it('When ipaddr.js names any special range, then the first and last address of it are refused', () => {
    // Cross-check against the library's own registry so a range it knows cannot be missing from ours.
    const special = (cls: object): unknown[] =>
      Object.values((cls as { prototype: { SpecialRanges: object } }).prototype.SpecialRanges);
    const ranges = [...special(ipaddr.IPv4), ...special(ipaddr.IPv6)].flatMap(
      (r: unknown) => (Array.isArray((r as unknown[])[0]) ? r : [r]) as [ipaddr.IPv4 | ipaddr.IPv6, number][],
    );
    const exempt = ['64:ff9b::', '2002::']; // decided by the IPv4 address they embed
    expect(ranges.length).to.be.greaterThan(20);
    for (const [net, bits] of ranges) {
      const first = net.toString();
      if (exempt.includes(first)) continue;
      const last = ipaddr.fromByteArray(
        net.toByteArray().map((byte, i) => byte | (0xff >> Math.max(0, Math.min(8, bits - i * 8)))),
      );
      expect(isPublicAddress(first), `${first}/${bits}`).to.equal(false);
      expect(isPublicAddress(last.toString()), `${last.toString()} in ${first}/${bits}`).to.equal(false);
    }
  });

  it('When the tables are read, then every row is a valid CIDR', () => {
    for (const [cidr] of [...REFUSED_IPV4_RANGES, ...REFUSED_IPV6_RANGES]) {
      expect(ipaddr.isValidCIDR(cidr), cidr).to.equal(true);
    }
  });

  it('When the text is not a canonical address, then classification throws', () => {
    for (const text of ['localhost', '2130706433', '0x7f000001', '127.1', '', '1.2.3.4.5']) {
      expect(() => classifyAddress(text), text).to.throw(TypeError);
      expect(isPublicAddress(text)).to.equal(false);
    }
  });
});

describe('outbound: ALLOWED_PRIVATE_HOSTS', () => {
  it('When the list mixes names, IPs and CIDRs of both families, then each kind matches what it covers', () => {
    const list = parseAllowedPrivateHosts(
      ' media.test, 10.1.2.3 ,, 192.168.0.0/16, ::1, [fe80::7], fd00::/8 ',
    );
    expect(list.entries).to.deep.equal([
      'media.test',
      '10.1.2.3/32',
      '192.168.0.0/16',
      '::1/128',
      'fe80::7/128',
      'fd00::/8',
    ]);
    expect(list.allowsHost('media.test')).to.equal(true);
    expect(list.allowsHost('MEDIA.Test.')).to.equal(true);
    expect(list.allowsHost('sub.media.test')).to.equal(false);
    expect(list.allowsAddress('10.1.2.3')).to.equal(true);
    expect(list.allowsAddress('10.1.2.4')).to.equal(false);
    expect(list.allowsAddress('192.168.44.1')).to.equal(true);
    expect(list.allowsAddress('::1')).to.equal(true);
    expect(list.allowsAddress('fd00:1::5')).to.equal(true);
    expect(list.allowsAddress('fc00::5')).to.equal(false);
    expect(list.allowsAddress('::ffff:192.168.1.1')).to.equal(true);
    expect(list.allowsAddress('::ffff:172.16.0.1')).to.equal(false);
  });

  it('When an entry uses a numeric IPv4 notation or an IDN, then it is normalised like a URL host', () => {
    const list = parseAllowedPrivateHosts('127.1,2130706433,Bücher.Example');
    expect(list.entries).to.deep.equal(['xn--bcher-kva.example', '127.0.0.1/32', '127.0.0.1/32']);
  });

  it('When the text is empty or unset, then nothing is allowed', () => {
    for (const text of ['', ' , ', undefined]) {
      const list = parseAllowedPrivateHosts(text);
      expect(list.entries).to.deep.equal([]);
      expect(list.allowsAddress('127.0.0.1')).to.equal(false);
    }
  });

  const malformed = [
    '10.0.0.0/33',
    '::1/129',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '0x7f.1/8',
    'nonsense/8',
    'host:8080',
    '10.0.0.1:80',
    '*.example.com',
    'bad host',
    'user@host',
    'http://host',
    '1.2.3.4.5',
    '-leading.example',
    `${'a'.repeat(64)}.example`,
  ];
  for (const entry of malformed) {
    it(`When an entry is "${entry}", then parsing fails naming the variable and the entry`, () => {
      expect(() => parseAllowedPrivateHosts(`ok.example, ${entry}`)).to.throw(
        Error,
        `ALLOWED_PRIVATE_HOSTS: entry "${entry}"`,
      );
    });
  }

  it('When the caller names its variable, then the error names that variable', () => {
    expect(() => parseAllowedPrivateHosts('a b', 'WEBHOOK_ALLOWED_HOSTS')).to.throw(
      /^WEBHOOK_ALLOWED_HOSTS: /,
    );
  });
});
