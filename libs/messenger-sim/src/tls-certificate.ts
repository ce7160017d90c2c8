import { createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * Throwaway TLS material: a CA and a leaf it signs, built with node:crypto and a tiny DER writer so
 * the simulator's media host needs no extra dependency. The CA PEM is what clients trust. Tests
 * that need an HTTPS peer of their own use `createTlsMaterial` too (tests may import the simulator).
 */
export interface TlsMaterial {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const der = (tag: number, body: Buffer): Buffer => {
  const len = body.length;
  let header: Buffer;
  if (len < 0x80) header = Buffer.from([tag, len]);
  else if (len < 0x100) header = Buffer.from([tag, 0x81, len]);
  else header = Buffer.from([tag, 0x82, len >> 8, len & 0xff]);
  return Buffer.concat([header, body]);
};
const seq = (...items: Buffer[]): Buffer => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => der(0x31, Buffer.concat(items));
const octets = (body: Buffer): Buffer => der(0x04, body);
const bitString = (body: Buffer): Buffer => der(0x03, Buffer.concat([Buffer.from([0]), body]));
const explicit = (n: number, body: Buffer): Buffer => der(0xa0 + n, body);
const bool = (v: boolean): Buffer => Buffer.from([0x01, 0x01, v ? 0xff : 0x00]);

const integer = (value: Buffer): Buffer => {
  let v = value;
  while (v.length > 1 && v[0] === 0 && (v[1] ?? 0) < 0x80) v = v.subarray(1);
  if ((v[0] ?? 0) >= 0x80) v = Buffer.concat([Buffer.from([0]), v]);
  return der(0x02, v);
};

const oid = (dotted: string): Buffer => {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [(parts[0] ?? 0) * 40 + (parts[1] ?? 0)];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part & 0x7f];
    let rest = part >>> 7;
    while (rest > 0) {
      chunk.unshift((rest & 0x7f) | 0x80);
      rest >>>= 7;
    }
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
};

const utcTime = (date: Date): Buffer => {
  const p = (n: number): string => String(n).padStart(2, '0');
  const s =
    p(date.getUTCFullYear() % 100) +
    p(date.getUTCMonth() + 1) +
    p(date.getUTCDate()) +
    p(date.getUTCHours()) +
    p(date.getUTCMinutes()) +
    p(date.getUTCSeconds()) +
    'Z';
  return der(0x17, Buffer.from(s, 'ascii'));
};

const name = (commonName: string): Buffer =>
  seq(set(seq(oid('2.5.4.3'), der(0x0c, Buffer.from(commonName, 'utf8')))));

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

interface CertSpec {
  subject: string;
  issuer: string;
  publicKey: KeyObject;
  signingKey: KeyObject;
  isCa: boolean;
  /** Names the leaf is valid for: IPv4 literals become IP entries, the rest DNS entries. */
  altNames?: string[];
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

const altName = (name: string): Buffer => {
  const ip = IPV4.exec(name);
  return ip ? der(0x87, Buffer.from(ip.slice(1).map(Number))) : der(0x82, Buffer.from(name, 'ascii'));
};

function buildCertificate(spec: CertSpec): string {
  const now = Date.now();
  const extensions: Buffer[] = [
    seq(oid('2.5.29.19'), bool(true), octets(spec.isCa ? seq(bool(true)) : seq())),
  ];
  if (!spec.isCa) {
    const san = seq(...(spec.altNames ?? []).map(altName));
    extensions.push(seq(oid('2.5.29.17'), octets(san)));
  }
  const spki = spec.publicKey.export({ type: 'spki', format: 'der' });
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(randomBytes(12)),
    ECDSA_SHA256,
    name(spec.issuer),
    seq(utcTime(new Date(now - 3600_000)), utcTime(new Date(now + 365 * 24 * 3600_000))),
    name(spec.subject),
    spki,
    explicit(3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, spec.signingKey);
  const cert = seq(tbs, ECDSA_SHA256, bitString(signature));
  const b64 = cert.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64.trimEnd()}\n-----END CERTIFICATE-----\n`;
}

/**
 * A new CA (named `caName`) and a leaf it signs, valid only for `altNames` (IPv4 literals become IP
 * entries, the rest DNS names); the leaf's subject is the first of them.
 */
export function createTlsMaterial(altNames: string[], caName = 'messenger-sim test CA'): TlsMaterial {
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const leaf = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caPem = buildCertificate({
    subject: caName,
    issuer: caName,
    publicKey: ca.publicKey,
    signingKey: ca.privateKey,
    isCa: true,
  });
  const certPem = buildCertificate({
    subject: altNames[0] ?? 'leaf',
    issuer: caName,
    publicKey: createPublicKey(leaf.privateKey),
    signingKey: ca.privateKey,
    isCa: false,
    altNames,
  });
  const keyPem = leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { caPem, certPem, keyPem };
}

/** The media host's: for 127.0.0.1, localhost and `hosts`, the names clients may use to reach it. */
export function createMediaTlsMaterial(hosts: string[] = []): TlsMaterial {
  const altNames = [...new Set(['127.0.0.1', 'localhost', ...hosts.filter((h) => h && !h.includes(':'))])];
  return createTlsMaterial(altNames, 'messenger-sim media CA');
}
