import { randomBytes, randomInt } from 'node:crypto';
import {
  Curve,
  getBinaryNodeChild,
  hmacSign,
  jidEncode,
  proto,
  S_WHATSAPP_NET,
} from '@whiskeysockets/baileys';
import { newStanzaId, unixSeconds, type ClientConnection } from './client-connection.js';
import type { CompanionDevice, SimUser } from './directory.js';
import { bytesOf, node } from './stanza.js';

const ACCOUNT_SIG_PREFIX = Buffer.from([6, 0]);
const DEVICE_SIG_PREFIX = Buffer.from([6, 1]);
const REFS_PER_SESSION = 6;

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
  const accountSignature = Curve.sign(
    account.signal.identity.private,
    Buffer.concat([ACCOUNT_SIG_PREFIX, details, session.identityKey]),
  );
  const signedIdentity = Buffer.from(
    proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey, accountSignature }).finish(),
  );
  const hmac = hmacSign(signedIdentity, advSecret);
  const identityHmac = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signedIdentity, hmac }).finish();
  const jid = jidEncode(account.phone, 's.whatsapp.net', deviceId);
  const lid = jidEncode(account.lid, 'lid', deviceId);

  const reply = await session.conn.query(
    node('iq', { to: S_WHATSAPP_NET, type: 'set', xmlns: 'md', id: newStanzaId(), t: unixSeconds() }, [
      node('pair-success', {}, [
        node('device-identity', {}, identityHmac),
        node('platform', { name: 'android' }),
        node('device', { jid, lid }),
        node('biz', { name: account.name }),
      ]),
    ]),
  );
  const signNode = getBinaryNodeChild(getBinaryNodeChild(reply, 'pair-device-sign'), 'device-identity');
  const signed = bytesOf(signNode);
  if (!signed) throw new Error('companion did not sign the device identity');
  const companion = proto.ADVSignedDeviceIdentity.decode(signed);
  const deviceMsg = Buffer.concat([DEVICE_SIG_PREFIX, details, session.identityKey, accountSignatureKey]);
  if (
    !companion.deviceSignature ||
    !Curve.verify(session.identityKey, deviceMsg, companion.deviceSignature)
  ) {
    throw new Error('companion device signature is invalid');
  }
  const device: CompanionDevice = {
    id: deviceId,
    keyIndex,
    noiseKey: session.noiseKey,
    identityKey: session.identityKey,
    registrationId: session.registrationId,
    signedPreKey: session.signedPreKey,
    preKeys: new Map(),
    platform: 'web',
    linkedAt: new Date().toISOString(),
    pending: [],
  };
  account.devices.set(deviceId, device);
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
