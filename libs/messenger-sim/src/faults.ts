import { normalizePhone } from './directory.js';

/** A fault armed for one account (or all when `phone` is absent), for `remaining` hits or forever. */
interface Armed<T> {
  phone?: string;
  remaining: number | null;
  detail: T;
}

export interface RefuseLoginFault {
  phone?: string;
  /** `<failure reason>` sent instead of `<success>`; 401 logs the client out, 503/500 do not. */
  reason?: number;
  count?: number | null;
}

export interface AckErrorFault {
  phone?: string;
  /** Only messages to this recipient phone number. */
  to?: string;
  error?: number;
  count?: number | null;
}

export interface StallFault {
  phone?: string;
  /** iq namespace to swallow, e.g. `usync`, `encrypt`, `w:m`, `w:profile:picture`. */
  xmlns?: string;
  /** first child tag, e.g. `key`, `media_conn`. */
  tag?: string;
  /** Answered this much later instead of never: a slow server (a send whose lookups take long). */
  ms?: number;
  count?: number | null;
}

/** How a contact's phone fails to decrypt a message (retry-receipts.ts). */
export type UndecryptableMode = 'once' | 'always' | 'reinstalled';
export const UNDECRYPTABLE_MODES: readonly UndecryptableMode[] = ['once', 'always', 'reinstalled'];

export interface UndecryptableFault {
  /** The contact whose phone cannot decrypt (every contact when absent). */
  phone?: string;
  /**
   * `once`: the first copy of the message fails, the re-sent copy is read; `always`: every copy
   * fails (the phone asks again up to its bound, then gives up); `reinstalled`: the phone was
   * re-installed (new identity): the copy fails and the retry receipt carries the new keys.
   * @defaultValue 'once'
   */
  mode?: UndecryptableMode;
  /** How many messages (each with all its copies) this takes; null: every message. @defaultValue 1 */
  count?: number | null;
  /** How long after a failed copy the retry receipt is sent. @defaultValue 50 */
  delayMs?: number;
}

const take = <T>(list: Armed<T>[], phone: string | undefined, match: (d: T) => boolean): T | undefined => {
  const index = list.findIndex((a) => (!a.phone || a.phone === phone) && match(a.detail));
  if (index < 0) return undefined;
  const armed = list[index]!;
  if (armed.remaining !== null && --armed.remaining <= 0) list.splice(index, 1);
  return armed.detail;
};

const arm = <T extends { phone?: string; count?: number | null }>(
  list: Armed<T>[],
  fault: T,
  defaultCount: number | null,
): void => {
  const remaining = fault.count === undefined ? defaultCount : fault.count;
  list.push({ phone: fault.phone ? normalizePhone(fault.phone) : undefined, remaining, detail: fault });
};

/**
 * The next registration socket(s) get a `<success>` right after the QR refs, before any pairing:
 * a server answering a connection that is not logged in, which whatsmeow ignores since 5f04eac6
 * (June 2026, "ignore connect success before pairing is completed").
 */
export interface EarlySuccessFault {
  count?: number | null;
}

/** Fault injection switches; each check consumes one armed hit. */
export class Faults {
  private earlySuccesses: Armed<EarlySuccessFault>[] = [];
  private refuseLogins: Armed<RefuseLoginFault>[] = [];
  private ackErrors: Armed<AckErrorFault>[] = [];
  private stalls: Armed<StallFault>[] = [];
  private undecryptables: Armed<UndecryptableFault>[] = [];

  earlySuccess(fault: EarlySuccessFault): void {
    arm(this.earlySuccesses, fault, 1);
  }

  /** Whether this registration socket gets an early `<success>` (consumes one hit). */
  takeEarlySuccess(): boolean {
    return take(this.earlySuccesses, undefined, () => true) !== undefined;
  }

  refuseLogin(fault: RefuseLoginFault): void {
    arm(this.refuseLogins, fault, null);
  }

  ackError(fault: AckErrorFault): void {
    arm(this.ackErrors, fault, 1);
  }

  stall(fault: StallFault): void {
    arm(this.stalls, fault, 1);
  }

  /** A contact's phone fails to decrypt the next message(s) it gets (retry-receipts.ts). */
  undecryptable(fault: UndecryptableFault): void {
    arm(this.undecryptables, fault, 1);
  }

  clear(): void {
    this.earlySuccesses = [];
    this.refuseLogins = [];
    this.ackErrors = [];
    this.stalls = [];
    this.undecryptables = [];
  }

  /** The undecryptable fault armed for this contact's next message (consumed), if any. */
  takeUndecryptable(contactPhone: string): UndecryptableFault | undefined {
    return take(this.undecryptables, contactPhone, () => true);
  }

  takeRefusal(phone: string): number | undefined {
    const hit = take(this.refuseLogins, phone, () => true);
    return hit ? (hit.reason ?? 401) : undefined;
  }

  takeAckError(phone: string, to: string): number | undefined {
    const hit = take(this.ackErrors, phone, (d) => !d.to || normalizePhone(d.to) === to);
    return hit ? (hit.error ?? 479) : undefined;
  }

  /** The stall armed for this iq (consumed), if any. */
  takeStall(phone: string | undefined, xmlns: string, tag: string | undefined): StallFault | undefined {
    return take(this.stalls, phone, (d) => (!d.xmlns || d.xmlns === xmlns) && (!d.tag || d.tag === tag));
  }
}
