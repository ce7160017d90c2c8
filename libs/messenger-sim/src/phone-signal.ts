import { randomInt } from 'node:crypto';
import { generateSignalPubKey } from '@whiskeysockets/baileys';
import { ProtocolAddress, SessionBuilder, SessionCipher, SessionRecord, type SignalStorage } from 'libsignal';
import { generateKeyPair, SigningKeyPair, type KeyPair } from './certificates.js';

/** What a client needs to start a Signal session with a device (the `encrypt get <key>` answer). */
export interface PreKeyBundle {
  registrationId: number;
  identityKey: Buffer;
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  preKey?: { keyId: number; publicKey: Buffer };
}

const SIGNED_PRE_KEY_ID = 1;

interface SessionEntry {
  indexInfo: { closed: number };
}

/**
 * libsignal dumps every closed/reopened session (keys included) to the console. These records
 * belong to simulated phones only, so their copies of the two methods do the same without the
 * dump; Baileys' own records in the same process are untouched.
 */
function quiet(record: SessionRecord): SessionRecord {
  const r = record as unknown as { closeSession(s: SessionEntry): void; openSession(s: SessionEntry): void };
  r.closeSession = (session) => {
    if (session.indexInfo.closed === -1) session.indexInfo.closed = Date.now();
  };
  r.openSession = (session) => {
    session.indexInfo.closed = -1;
  };
  return record;
}

/** A PhoneSignal as a saved state keeps it (persistence.ts): every key base64. */
export interface SavedPhoneSignal {
  identitySeed: string;
  registrationId: number;
  signedPreKey: { public: string; private: string };
  preKeys: [number, { public: string; private: string }][];
  nextPreKeyId: number;
  /** libsignal's own serialisation of each session record (plain JSON, keys in base64). */
  sessions: [string, unknown][];
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const bytes = (s: string) => Buffer.from(s, 'base64');
const savedPair = (k: KeyPair) => ({ public: b64(k.public), private: b64(k.private) });
const pairOf = (k: { public: string; private: string }): KeyPair => ({
  public: bytes(k.public),
  private: bytes(k.private),
});

/**
 * The Signal identity of a simulated phone (device 0 of a user). One-time prekeys are minted
 * on demand: the client rebuilds sessions on every new socket and when its device cache
 * expires, so a fixed pool would run dry in long runs.
 */
export class PhoneSignal {
  readonly identity: SigningKeyPair;
  readonly registrationId: number;
  private readonly signedPreKey: KeyPair;
  private readonly signedPreKeySignature: Buffer;
  private readonly preKeys = new Map<number, KeyPair>();
  private nextPreKeyId = 1;
  /** What SessionRecord.serialize() gives (typed as bytes by libsignal's types; a JSON object). */
  private readonly sessions = new Map<string, Uint8Array>();

  /** A new identity, or the one a saved state kept (its sessions included). */
  constructor(saved?: SavedPhoneSignal) {
    this.identity = new SigningKeyPair(saved && bytes(saved.identitySeed));
    this.registrationId = saved?.registrationId ?? randomInt(1, 16380);
    this.signedPreKey = saved ? pairOf(saved.signedPreKey) : generateKeyPair();
    this.signedPreKeySignature = this.identity.sign(generateSignalPubKey(this.signedPreKey.public));
    if (saved) {
      for (const [id, key] of saved.preKeys) this.preKeys.set(id, pairOf(key));
      this.nextPreKeyId = saved.nextPreKeyId;
      for (const [address, record] of saved.sessions) this.sessions.set(address, record as Uint8Array);
    }
  }

  toSaved(): SavedPhoneSignal {
    return {
      identitySeed: b64(this.identity.seed),
      registrationId: this.registrationId,
      signedPreKey: savedPair(this.signedPreKey),
      preKeys: [...this.preKeys].map(([id, key]) => [id, savedPair(key)]),
      nextPreKeyId: this.nextPreKeyId,
      sessions: [...this.sessions],
    };
  }

  private readonly storage: SignalStorage = {
    loadSession: async (id) => {
      const data = this.sessions.get(id);
      return data ? quiet(SessionRecord.deserialize(data)) : undefined;
    },
    storeSession: async (id, session) => {
      this.sessions.set(id, session.serialize());
    },
    isTrustedIdentity: () => true,
    loadPreKey: async (id) => {
      const key = this.preKeys.get(Number(id));
      return key
        ? { privKey: key.private, pubKey: Buffer.from(generateSignalPubKey(key.public)) }
        : undefined;
    },
    removePreKey: (id) => {
      this.preKeys.delete(Number(id));
    },
    loadSignedPreKey: () => ({
      privKey: this.signedPreKey.private,
      pubKey: Buffer.from(generateSignalPubKey(this.signedPreKey.public)),
    }),
    getOurRegistrationId: () => this.registrationId,
    getOurIdentity: () => ({
      privKey: this.identity.private,
      pubKey: Buffer.from(generateSignalPubKey(this.identity.public)),
    }),
  };

  freshBundle(): PreKeyBundle {
    const keyId = this.nextPreKeyId++;
    const preKey = generateKeyPair();
    this.preKeys.set(keyId, preKey);
    return {
      registrationId: this.registrationId,
      identityKey: Buffer.from(this.identity.public),
      signedPreKey: {
        keyId: SIGNED_PRE_KEY_ID,
        publicKey: this.signedPreKey.public,
        signature: this.signedPreKeySignature,
      },
      preKey: { keyId, publicKey: preKey.public },
    };
  }

  /** Decrypts a pkmsg/msg from a sender device; libsignal queues per address, so call in arrival order. */
  decrypt(sender: ProtocolAddress, type: string, ciphertext: Uint8Array): Promise<Buffer> {
    const cipher = new SessionCipher(this.storage, sender);
    return type === 'pkmsg'
      ? cipher.decryptPreKeyWhisperMessage(ciphertext)
      : cipher.decryptWhisperMessage(ciphertext);
  }

  hasSession(remote: ProtocolAddress): boolean {
    const data = this.sessions.get(remote.toString());
    return !!data && SessionRecord.deserialize(data).haveOpenSession();
  }

  async startSession(remote: ProtocolAddress, bundle: PreKeyBundle): Promise<void> {
    const builder = new SessionBuilder(this.storage, remote);
    await builder.initOutgoing({
      registrationId: bundle.registrationId,
      identityKey: generateSignalPubKey(bundle.identityKey),
      signedPreKey: {
        keyId: bundle.signedPreKey.keyId,
        publicKey: generateSignalPubKey(bundle.signedPreKey.publicKey),
        signature: bundle.signedPreKey.signature,
      },
      preKey: bundle.preKey
        ? { keyId: bundle.preKey.keyId, publicKey: generateSignalPubKey(bundle.preKey.publicKey) }
        : (undefined as never),
    });
  }

  async encrypt(
    remote: ProtocolAddress,
    plaintext: Uint8Array,
  ): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Buffer }> {
    const cipher = new SessionCipher(this.storage, remote);
    const { type, body } = await cipher.encrypt(plaintext);
    return { type: type === 3 ? 'pkmsg' : 'msg', ciphertext: Buffer.from(body, 'binary') };
  }
}

export const signalAddress = (user: string, device: number): ProtocolAddress =>
  new ProtocolAddress(user, device);
