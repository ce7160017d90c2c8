import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { CONSOLE_PASSWORD_LIMITS } from '@mgw/store';
import { hasLoneSurrogate } from '@mgw/contracts';

/**
 * The console users' passwords (docs/workspaces.md "The console"): hashed with scrypt, a
 * memory-hard KDF, at N = 2^15, r = 8, p = 1 (32 MiB and ~50-100 ms per hash), a 32-byte key and a
 * 16-byte random salt, stored with their parameters — `scrypt$15$8$1$<salt>$<key>` (base64) — so
 * that they can be raised later without locking anyone out (a hash is checked with the parameters
 * it was made with). A password is NFC-normalised first: the same characters typed on two
 * keyboards are the same password.
 *
 * scrypt runs in libuv's thread pool (4 threads by default), which file and DNS work share: at most
 * `running` hashes run at once and `queued` wait; beyond, `hash`/`verify` throw KdfBusy (a 503) at
 * once, so a flood of sign-ins takes neither the pool nor the memory of the API.
 */
export const KDF = {
  log2N: 15,
  r: 8,
  p: 1,
  keyLength: 32,
  saltLength: 16,
  maxmem: 64 * 1024 * 1024,
} as const;

/** The gate's bounds: hashes running at once, and waiting. */
export const KDF_GATE = { running: 2, queued: 32 } as const;

/** More hashes were asked for than the gate lets run or wait. */
export class KdfBusy extends Error {
  override name = 'KdfBusy';
  constructor() {
    super('the password hashing gate is full');
  }
}

/** The bounds a stored hash's parameters must be within to be computed at all (a corrupt record costs no more). */
const LIMITS = { log2N: [10, 20], r: [1, 32], p: [1, 16] } as const;
const FORMAT = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

interface Parsed {
  log2N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

function parseHash(stored: string): Parsed | undefined {
  const m = FORMAT.exec(stored);
  if (!m) return undefined;
  const [log2N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const within = (v: number, [lo, hi]: readonly [number, number]) => v >= lo && v <= hi;
  if (!within(log2N, LIMITS.log2N) || !within(r, LIMITS.r) || !within(p, LIMITS.p)) return undefined;
  const salt = Buffer.from(m[4]!, 'base64');
  const key = Buffer.from(m[5]!, 'base64');
  if (salt.length < 16 || key.length < 16 || key.length > 64) return undefined;
  return { log2N, r, p, salt, key };
}

/** A password as it is hashed: NFC. Throws on a lone surrogate (the API's schemas refuse it before). */
export function normalisePassword(password: string): string {
  if (hasLoneSurrogate(password)) throw new Error('a password must be valid Unicode');
  return password.normalize('NFC');
}

/** Its length as the rules count it: characters (code points) of its NFC form. */
export const passwordLength = (password: string): number => [...password.normalize('NFC')].length;

/** Why a new password is refused (`must …`, after the field's name), or undefined when it is fine. */
export function passwordProblem(password: string): string | undefined {
  if (hasLoneSurrogate(password)) return 'must be valid Unicode text (it has a lone surrogate)';
  const length = passwordLength(password);
  const { minLength, maxLength } = CONSOLE_PASSWORD_LIMITS;
  if (length < minLength || length > maxLength) return `must be ${minLength} to ${maxLength} characters long`;
  return undefined;
}

function derive(password: string, salt: Buffer, p: Omit<Parsed, 'salt' | 'key'>, keyLength: number) {
  const options: ScryptOptions = {
    N: 2 ** p.log2N,
    r: p.r,
    p: p.p,
    // scrypt needs 128 * N * r bytes; Node's default maxmem (32 MiB) is exactly N = 2^15, r = 8.
    maxmem: Math.max(KDF.maxmem, 256 * 2 ** p.log2N * p.r),
  };
  return new Promise<Buffer>((resolve, reject) =>
    scrypt(normalisePassword(password), salt, keyLength, options, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/**
 * A fixed hash no password is known to match, made with the current parameters: an unknown user
 * name is checked against it, so it costs one scrypt as a known one does and timing does not tell
 * which names exist (its answer is ignored: an unknown user is refused whatever it matches).
 */
const DUMMY_HASH = `scrypt$${KDF.log2N}$${KDF.r}$${KDF.p}$AAECAwQFBgcICQoLDA0ODw==$${Buffer.alloc(KDF.keyLength, 0x5a).toString('base64')}`;

/** Hashes and checks passwords through a bounded gate (KDF_GATE). */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly gate: { running: number; queued: number } = KDF_GATE) {}

  /** A new password's hash, with its parameters and a fresh salt. Throws KdfBusy past the gate. */
  async hash(password: string): Promise<string> {
    const salt = randomBytes(KDF.saltLength);
    const key = await this.gated(() => derive(password, salt, KDF, KDF.keyLength));
    return `scrypt$${KDF.log2N}$${KDF.r}$${KDF.p}$${salt.toString('base64')}$${key.toString('base64')}`;
  }

  /**
   * Whether `password` is the one `stored` was made from, compared in constant time. `stored`
   * undefined (an unknown user): the dummy hash is computed all the same, and the answer is false.
   * A stored value that is no hash of ours is false, at the same cost. Throws KdfBusy past the gate.
   */
  async verify(password: string, stored: string | undefined): Promise<boolean> {
    const parsed = stored === undefined ? undefined : parseHash(stored);
    const against = parsed ?? parseHash(DUMMY_HASH)!;
    const key = await this.gated(() => derive(password, against.salt, against, against.key.length));
    const same = key.length === against.key.length && timingSafeEqual(key, against.key);
    return parsed !== undefined && same;
  }

  /** Runs `work` when the gate has room: now, or after those before it; KdfBusy when it is full. */
  private async gated<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.gate.running) {
      if (this.waiting.length >= this.gate.queued) throw new KdfBusy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await work();
    } finally {
      // The place passes to the next waiting (running stays counted), or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Hashes running now and waiting (for a test to watch the gate). */
  load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
