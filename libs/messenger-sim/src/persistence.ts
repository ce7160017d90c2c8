import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { KeyPair } from './certificates.js';
import type { CompanionDevice, Directory, SimUser } from './directory.js';
import type { SimLogger } from './logger.js';
import { PhoneSignal, type SavedPhoneSignal } from './phone-signal.js';
import type { TlsMaterial } from './tls-certificate.js';

/**
 * What a simulator started with a state file keeps across restarts (the sandbox of `npm start`):
 * the network's root key and media CA (a gateway that read /info before still trusts them), and
 * every user with its Signal identity and sessions, its linked devices (their keys and uploaded
 * prekeys) and its contact settings — so a linked gateway logs in again and writes to the same
 * contacts. Not kept: inboxes, presence, groups, faults, restrictions, counters and stanzas
 * waiting for an offline device. Tests give no file: their simulators keep nothing.
 */
export interface SavedState {
  version: 1;
  root: { public: string; private: string };
  tls: TlsMaterial & { hosts: string[] };
  notOnWhatsApp: string[];
  users: SavedUser[];
}

interface SavedUser {
  phone: string;
  lid: string;
  name: string;
  pictureUrl?: string;
  receipts: SimUser['receipts'];
  addressing: SimUser['addressing'];
  hidePhone: boolean;
  /** Its username and the key guarding it (usernames.ts). */
  username?: string;
  usernamePin?: string;
  signal: SavedPhoneSignal;
  nextDeviceId: number;
  nextKeyIndex: number;
  devices: SavedDevice[];
  /** The account's NCT salt (first-contacts.ts), base64, once made. */
  nctSalt?: string;
}

interface SavedDevice {
  id: number;
  keyIndex: number;
  noiseKey: string;
  identityKey: string;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: string; signature: string };
  preKeys: [number, string][];
  platform: string;
  linkedAt: string;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const bytes = (s: string) => Buffer.from(s, 'base64');

/** How often a changed state is written (at most); a stop writes it at once. */
export const SAVE_EVERY_MS = 1_000;

export function keyPairOf(saved: SavedState['root']): KeyPair {
  return { public: bytes(saved.public), private: bytes(saved.private) };
}

/** Reads a state file; undefined when there is none yet. A file it cannot read stops the start. */
export function loadState(file: string): SavedState | undefined {
  if (!existsSync(file)) return undefined;
  let state: SavedState;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as SavedState;
  } catch (err) {
    throw new Error(
      `${file} is not a simulator state (${(err as Error).message}); move it away to start afresh`,
    );
  }
  if (state?.version !== 1 || !Array.isArray(state.users))
    throw new Error(`${file} is not a simulator state of version 1; move it away to start afresh`);
  return state;
}

/** A user's name, picture and contact settings: kept in the file as the directory holds them. */
type UserProfile = Pick<
  SavedUser,
  | 'phone'
  | 'lid'
  | 'name'
  | 'pictureUrl'
  | 'receipts'
  | 'addressing'
  | 'hidePhone'
  | 'username'
  | 'usernamePin'
>;

function profileOf(u: UserProfile): UserProfile {
  return {
    phone: u.phone,
    lid: u.lid,
    name: u.name,
    pictureUrl: u.pictureUrl,
    receipts: u.receipts,
    addressing: u.addressing,
    hidePhone: u.hidePhone,
    ...(u.username ? { username: u.username } : {}),
    ...(u.usernamePin ? { usernamePin: u.usernamePin } : {}),
  };
}

/** The directory's users, their identities and devices, as saved. */
export function restoreDirectory(directory: Directory, state: SavedState): void {
  const users = state.users.map((u): SimUser => ({
    ...profileOf(u),
    signal: new PhoneSignal(u.signal),
    inbox: [],
    undecryptable: [],
    nextDeviceId: u.nextDeviceId,
    nextKeyIndex: u.nextKeyIndex,
    devices: new Map(u.devices.map((d) => [d.id, deviceOf(d)])),
    ...(u.nctSalt ? { nctSalt: bytes(u.nctSalt) } : {}),
  }));
  directory.restore(users, state.notOnWhatsApp);
}

function deviceOf(d: SavedDevice): CompanionDevice {
  return {
    id: d.id,
    keyIndex: d.keyIndex,
    noiseKey: bytes(d.noiseKey),
    identityKey: bytes(d.identityKey),
    registrationId: d.registrationId,
    signedPreKey: {
      keyId: d.signedPreKey.keyId,
      publicKey: bytes(d.signedPreKey.publicKey),
      signature: bytes(d.signedPreKey.signature),
    },
    preKeys: new Map(d.preKeys.map(([id, key]) => [id, bytes(key)])),
    platform: d.platform,
    linkedAt: d.linkedAt,
    pending: [],
  };
}

export function stateOf(
  directory: Directory,
  root: KeyPair,
  tls: TlsMaterial & { hosts: string[] },
): SavedState {
  return {
    version: 1,
    root: { public: b64(root.public), private: b64(root.private) },
    tls,
    notOnWhatsApp: directory.notOnWhatsAppNumbers(),
    users: directory.users().map((u) => ({
      ...profileOf(u),
      signal: u.signal.toSaved(),
      nextDeviceId: u.nextDeviceId,
      nextKeyIndex: u.nextKeyIndex,
      ...(u.nctSalt ? { nctSalt: b64(u.nctSalt) } : {}),
      devices: [...u.devices.values()].map((d) => ({
        id: d.id,
        keyIndex: d.keyIndex,
        noiseKey: b64(d.noiseKey),
        identityKey: b64(d.identityKey),
        registrationId: d.registrationId,
        signedPreKey: {
          keyId: d.signedPreKey.keyId,
          publicKey: b64(d.signedPreKey.publicKey),
          signature: b64(d.signedPreKey.signature),
        },
        preKeys: [...d.preKeys].map(([id, key]) => [id, b64(key)] as [number, string]),
        platform: d.platform,
        linkedAt: d.linkedAt,
      })),
    })),
  };
}

/**
 * A save's cost bounds how soon the next may run: after a save of `ms`, none for `ms` × this, so
 * the simulator spends at most ~2 % of its time writing its state. A busy sandbox (100 devices
 * each sending to new contacts: every contact a user with Signal sessions) made a save of tens of
 * milliseconds; once a second, that held the simulator's event loop, and the acks every send
 * waits for, often enough to slow the gateway's pace (issue 55).
 */
export const SAVE_COST_FACTOR = 50;

/**
 * Writes the state to `file` whenever it changed, at most once a SAVE_EVERY_MS (less often when a
 * save is costly: SAVE_COST_FACTOR), and once more on `stop()`; it is not even serialised while
 * `changes()` stays the same. Each write goes to a temporary file renamed over the old one (0600:
 * the file holds the simulated phones' private keys), so a crash leaves the previous state or the
 * new one.
 */
export class StateWriter {
  private last = '';
  private savedAt = -1;
  /** No periodic save before this (ms): the last one's cost (SAVE_COST_FACTOR). */
  private notBefore = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly file: string,
    private readonly changes: () => number,
    private readonly snapshot: () => SavedState,
    private readonly logger: SimLogger,
  ) {
    mkdirSync(path.dirname(file), { recursive: true });
    this.timer = setInterval(() => {
      if (Date.now() >= this.notBefore) this.save();
    }, SAVE_EVERY_MS);
    this.timer.unref();
  }

  save(): void {
    const changes = this.changes();
    if (changes === this.savedAt) return;
    const started = performance.now();
    const text = JSON.stringify(this.snapshot());
    if (text !== this.last) {
      try {
        const tmp = `${this.file}.${process.pid}.tmp`;
        writeFileSync(tmp, text, { mode: 0o600 });
        renameSync(tmp, this.file);
      } catch (err) {
        this.logger.error({ err, file: this.file }, 'could not save the simulator state');
        return;
      }
      this.last = text;
    }
    this.savedAt = changes;
    this.notBefore = Date.now() + (performance.now() - started) * SAVE_COST_FACTOR;
  }

  stop(): void {
    clearInterval(this.timer);
    this.save();
  }
}
