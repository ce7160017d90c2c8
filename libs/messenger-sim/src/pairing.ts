import { randomBytes, randomInt } from 'node:crypto';
import {
  Curve,
  getBinaryNodeChild,
  hmacSign,
  jidEncode,
  proto,
  S_WHATSAPP_NET,
} from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { CompanionDevice, SimUser } from './directory.js';
import { bytesOf, newStanzaId, node, unixSeconds } from './stanza.js';

const ACCOUNT_SIG_PREFIX = Buffer.from([6, 0]);
const DEVICE_SIG_PREFIX = Buffer.from([6, 1]);
const REFS_PER_SESSION = 6;
/** The `platform` pair-success names (the primary phone's). */
export const PAIR_PLATFORM = 'android';

/** What a registering client told us about itself in its ClientPayload. */
export interface PairingSession {
  conn: ClientConnection;
  refs: string[];
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  busy: boolean;
}

export interface LinkResult {
  phone: string;
  deviceId: number;
  jid: string;
  lid: string;
}

const readBigEndian = (bytes: Uint8Array | null | undefined): number =>
  bytes ? [...bytes].reduce((acc, b) => acc * 256 + b, 0) : 0;

export function sessionFromRegistration(
  conn: ClientConnection,
  payload: proto.ClientPayload,
): PairingSession {
  const data = payload.devicePairingData;
  if (!data?.eIdent || !data.eSkeyVal || !data.eSkeySig || !conn.clientStaticKey) {
    throw new Error('registration payload without pairing data');
  }
  return {
    conn,
    refs: Array.from({ length: REFS_PER_SESSION }, () => `2@${randomBytes(24).toString('base64')}`),
    noiseKey: conn.clientStaticKey,
    identityKey: Buffer.from(data.eIdent),
    registrationId: readBigEndian(data.eRegid),
    signedPreKey: {
      keyId: readBigEndian(data.eSkeyId),
      publicKey: Buffer.from(data.eSkeyVal),
      signature: Buffer.from(data.eSkeySig),
    },
    busy: false,
  };
}

export const pairDeviceNode = (session: PairingSession) =>
  node('iq', { to: S_WHATSAPP_NET, type: 'set', xmlns: 'md', id: newStanzaId() }, [
    node(
      'pair-device',
      {},
      session.refs.map((ref) => node('ref', {}, Buffer.from(ref))),
    ),
  ]);

/** What the phone's signature of a companion gives: the pair-success stanza's contents. */
export interface SignedCompanion {
  deviceId: number;
  keyIndex: number;
  /** `ADVDeviceIdentity` bytes the account signed (the companion counter-signs them). */
  details: Buffer;
  accountSignatureKey: Buffer;
  /** `ADVSignedDeviceIdentityHMAC` bytes: the pair-success `device-identity` node. */
  identityHmac: Buffer;
  jid: string;
  lid: string;
}

/** The keys a companion registered with (its registration payload, or the fast link's request). */
export type CompanionKeys = Pick<
  CompanionDevice,
  'noiseKey' | 'identityKey' | 'registrationId' | 'signedPreKey'
>;

/**
 * The phone signs a new companion's identity key with the account key and HMACs it with the
 * companion's ADV secret (from its QR, or the pairing-code exchange): its device id, key index
 * and the identity pair-success carries. Shared by linking and the fast link (companions.ts).
 */
export function signCompanion(account: SimUser, identityKey: Buffer, advSecret: Buffer): SignedCompanion {
  const deviceId = account.nextDeviceId++;
  const keyIndex = account.nextKeyIndex++;
  const details = Buffer.from(
    proto.ADVDeviceIdentity.encode({
      rawId: randomInt(1, 2 ** 31),
      timestamp: Math.floor(Date.now() / 1000),
      keyIndex,
    }).finish(),
  );
  const accountSignatureKey = account.signal.identity.public;
  // The account key signs natively (SigningKeyPair): the same XEdDSA signature as Curve.sign.
  const accountSignature = account.signal.identity.sign(
    Buffer.concat([ACCOUNT_SIG_PREFIX, details, identityKey]),
  );
  const signedIdentity = Buffer.from(
    proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey, accountSignature }).finish(),
  );
  const hmac = hmacSign(signedIdentity, advSecret);
  const identityHmac = Buffer.from(
    proto.ADVSignedDeviceIdentityHMAC.encode({ details: signedIdentity, hmac }).finish(),
  );
  const jid = jidEncode(account.phone, 's.whatsapp.net', deviceId);
  const lid = jidEncode(account.lid, 'lid', deviceId);
  return { deviceId, keyIndex, details, accountSignatureKey, identityHmac, jid, lid };
}

/** The account's new linked device: from here on its logins are accepted (login.ts). */
export function addCompanion(
  account: SimUser,
  signed: SignedCompanion,
  keys: CompanionKeys,
): CompanionDevice {
  const device: CompanionDevice = {
    id: signed.deviceId,
    keyIndex: signed.keyIndex,
    noiseKey: keys.noiseKey,
    identityKey: keys.identityKey,
    registrationId: keys.registrationId,
    signedPreKey: keys.signedPreKey,
    preKeys: new Map(),
    platform: 'web',
    linkedAt: new Date().toISOString(),
    pending: [],
  };
  account.devices.set(signed.deviceId, device);
  return device;
}

/**
 * The phone's half of linking, shared by the QR and pairing-code flows: it signs the companion's
 * identity with the account key, sends pair-success, checks the companion's counter-signature and
 * finally asks the client to restart (515) so it logs in with its new credentials.
 */
export async function completePairing(
  session: PairingSession,
  account: SimUser,
  advSecret: Buffer,
): Promise<LinkResult> {
  const signed = signCompanion(account, session.identityKey, advSecret);
  const { deviceId, details, accountSignatureKey, jid, lid } = signed;
  const reply = await session.conn.query(
    node('iq', { to: S_WHATSAPP_NET, type: 'set', xmlns: 'md', id: newStanzaId(), t: unixSeconds() }, [
      node('pair-success', {}, [
        node('device-identity', {}, signed.identityHmac),
        node('platform', { name: PAIR_PLATFORM }),
        node('device', { jid, lid }),
        node('biz', { name: account.name }),
      ]),
    ]),
  );
  const signNode = getBinaryNodeChild(getBinaryNodeChild(reply, 'pair-device-sign'), 'device-identity');
  const counterSigned = bytesOf(signNode);
  if (!counterSigned) throw new Error('companion did not sign the device identity');
  const companion = proto.ADVSignedDeviceIdentity.decode(counterSigned);
  const deviceMsg = Buffer.concat([DEVICE_SIG_PREFIX, details, session.identityKey, accountSignatureKey]);
  if (
    !companion.deviceSignature ||
    !Curve.verify(session.identityKey, deviceMsg, companion.deviceSignature)
  ) {
    throw new Error('companion device signature is invalid');
  }
  addCompanion(account, signed, session);
  session.conn.endWith(node('stream:error', { code: '515' }));
  return { phone: account.phone, deviceId, jid, lid };
}

/**
 * Parses `ref,noiseKeyB64,identityKeyB64,advSecretB64,platform`; rc14 prefixes it with
 * `https://wa.me/settings/linked_devices#`, older clients do not.
 */
export function parseQr(qr: string): {
  ref: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  advSecret: Buffer;
} {
  const trimmed = qr.trim();
  const hash = trimmed.startsWith('http') ? trimmed.indexOf('#') : -1;
  const parts = trimmed.slice(hash + 1).split(',');
  if (parts.length < 4) throw new Error('not a WhatsApp pairing QR');
  const [ref, noise, identity, adv] = parts as [string, string, string, string];
  return {
    ref,
    noiseKey: Buffer.from(noise, 'base64'),
    identityKey: Buffer.from(identity, 'base64'),
    advSecret: Buffer.from(adv, 'base64'),
  };
}
