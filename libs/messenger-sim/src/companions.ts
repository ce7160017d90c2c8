import { normalizePhone } from './directory.js';
import { addCompanion, PAIR_PLATFORM, signCompanion, type LinkResult } from './pairing.js';
import type { LinkInput, PhoneLinker } from './phone.js';
import { SimError } from './sim-error.js';
import type { SimLogger } from './logger.js';

/** What provisioning companions needs of the simulator. */
export interface CompanionsContext {
  readonly linker: PhoneLinker;
  readonly logger: SimLogger;
  /** Counts what may have changed the state (persistence.ts). */
  changes: number;
}

/**
 * The fast link, for benches and tests (the test kit's `fastLink`): the phone links a companion
 * device whose keys the caller made itself, without a pairing socket — no QR to scan, no
 * registration handshake, no pair-success round trip. The phone signs the companion's identity
 * exactly as when it links one by QR (`signCompanion`, pairing.ts) and registers it the same way
 * (`addCompanion`), so the companion's later login is accepted as after a QR link, and a state
 * file keeps it like any linked device. What the caller gets back is what pair-success would have
 * carried; it builds the companion's credentials from that as Baileys does on pair-success.
 *
 * Only the companion's counter-signature is not asked for: no socket is there to give it (the real
 * phone only checks it, nothing the simulator keeps depends on it).
 *
 * This is the simulator's own control API: the gateway's API never reaches it (nor any route of
 * it); a gateway in production talks to WhatsApp, which has no such thing.
 */
export interface CompanionInput extends LinkInput {
  /** The companion's Noise static public key: its logins are checked against it. */
  noiseKey: Buffer;
  /** Its Signal identity public key (Baileys' `signedIdentityKey.public`). */
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  /** The ADV secret (Baileys' `advSecretKey`, a QR's fourth part) the device identity is HMACed with. */
  advSecret: Buffer;
}

/** What pair-success would have carried, with the link's result. */
export interface ProvisionedCompanion extends LinkResult {
  /** The `device-identity` node: an `ADVSignedDeviceIdentityHMAC`, base64. */
  deviceIdentity: string;
  /** The `platform` node's name. */
  platform: string;
  /** The `biz` node's name: the account's name. */
  businessName: string;
}

/** How many companions one `POST /companions` may provision. */
export const MAX_COMPANIONS_PER_REQUEST = 1000;

export function provisionCompanion(sim: CompanionsContext, input: CompanionInput): ProvisionedCompanion {
  const account = sim.linker.ensureAccount(input);
  const signed = signCompanion(account, input.identityKey, input.advSecret);
  addCompanion(account, signed, input);
  sim.changes++;
  sim.logger.debug({ phone: account.phone, device: signed.deviceId }, 'companion provisioned (fast link)');
  return {
    phone: account.phone,
    deviceId: signed.deviceId,
    jid: signed.jid,
    lid: signed.lid,
    deviceIdentity: signed.identityHmac.toString('base64'),
    platform: PAIR_PLATFORM,
    businessName: account.name,
  };
}

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

/**
 * `POST /accounts/:phone/companions` provisions one companion of the account (body: the
 * companion's keys, base64, and optionally the account's `name` and `pictureUrl`);
 * `POST /companions` provisions many (`{ companions: [{ phone, …the same }] }`, up to
 * MAX_COMPANIONS_PER_REQUEST), all checked before any is provisioned.
 */
export function companionRoutes(sim: CompanionsContext): Array<[string, RegExp, Handler]> {
  return [
    [
      'POST',
      /^\/accounts\/([^/]+)\/companions$/,
      (b, [phone]) => provisionCompanion(sim, companionInput({ ...b, phone }, '')),
    ],
    [
      'POST',
      /^\/companions$/,
      (b) => {
        const list = b.companions;
        if (!Array.isArray(list) || list.length === 0 || list.length > MAX_COMPANIONS_PER_REQUEST)
          throw new SimError(`companions must be an array of 1 to ${MAX_COMPANIONS_PER_REQUEST}`, 400);
        const inputs = list.map((item: unknown, i) => {
          if (!item || typeof item !== 'object' || Array.isArray(item))
            throw new SimError(`companions[${i}] must be an object`, 400);
          return companionInput(item as Body, `companions[${i}].`);
        });
        return { companions: inputs.map((input) => provisionCompanion(sim, input)) };
      },
    ],
  ];
}

/** The request's companion, checked (`at`: where it is in the body, for the error). */
function companionInput(b: Body, at: string): CompanionInput {
  const text = (key: string, required: boolean): string | undefined => {
    const v = b[key];
    if (v === undefined || v === null || v === '') {
      if (required) throw new SimError(`${at}${key} is required`, 400);
      return undefined;
    }
    if (typeof v !== 'string') throw new SimError(`${at}${key} must be a string`, 400);
    return v;
  };
  const key = (value: unknown, name: string, length: number): Buffer => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0);
    if (bytes.length !== length) throw new SimError(`${at}${name} must be ${length} bytes, base64`, 400);
    return bytes;
  };
  const id = (value: unknown, name: string): number => {
    if (!Number.isInteger(value) || (value as number) < 0)
      throw new SimError(`${at}${name} must be an integer >= 0`, 400);
    return value as number;
  };
  const spk = b.signedPreKey as Body | undefined;
  if (!spk || typeof spk !== 'object' || Array.isArray(spk))
    throw new SimError(`${at}signedPreKey must be an object`, 400);
  const phone = normalizePhone(text('phone', true)!);
  if (!phone) throw new SimError(`${at}phone must have digits`, 400);
  return {
    phone,
    name: text('name', false),
    pictureUrl: text('pictureUrl', false),
    noiseKey: key(b.noiseKey, 'noiseKey', 32),
    identityKey: key(b.identityKey, 'identityKey', 32),
    registrationId: id(b.registrationId, 'registrationId'),
    signedPreKey: {
      keyId: id(spk.keyId, 'signedPreKey.keyId'),
      publicKey: key(spk.publicKey, 'signedPreKey.publicKey', 32),
      signature: key(spk.signature, 'signedPreKey.signature', 64),
    },
    advSecret: key(b.advSecret, 'advSecret', 32),
  };
}
