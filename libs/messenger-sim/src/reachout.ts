import { randomBytes } from 'node:crypto';
import type { Admission } from './admission.js';
import type { SimUser } from './directory.js';
import { csTokenValid } from './first-contacts.js';
import { SimError } from './sim-error.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** setTimeout fires at once beyond this, so longer locks are re-armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The error WhatsApp acks a refused reach-out with; Baileys has no other code for a capped new chat. */
export const REACHOUT_REFUSED = 463;

export interface ReachoutLock {
  until: number;
  enforcementType: string;
}

export interface RestrictionsView {
  phone: string;
  restrictedUntil?: string;
  enforcementType?: string;
  newChatsToday: number;
  newChatCap?: number;
}

/** The payload of `xwa2_message_capping_info` and of its notification (Baileys' NewChatMessageCapInfo). */
export interface CapInfo {
  total_quota: number;
  used_quota: number;
  cycle_start_timestamp: string;
  cycle_end_timestamp: string;
  server_sent_timestamp: string;
  capping_status: 'NONE' | 'CAPPED';
  ote_status: 'NOT_ELIGIBLE';
  mv_status: 'NOT_ELIGIBLE';
}

/** A trusted-contact token a contact's phone issued to an account, and the devices told about it. */
interface IssuedToken {
  token: Buffer;
  t: string;
  devices: Set<number>;
}

/** The privacy tokens a one-to-one message carried (`<tctoken>`, `<cstoken>`). */
export interface PrivacyTokens {
  tctoken?: Buffer;
  cstoken?: Buffer;
}

export interface ReachoutEvents {
  /** The lock of an account started, changed or ended: tell its devices. */
  lockChanged(phone: string): void;
  /** An account started a chat that counts against its new-chat cap. */
  newChatOpened(phone: string): void;
}

export interface RestrictInput {
  phone: string;
  /** When the lock ends: ISO 8601 or epoch milliseconds. */
  until?: string | number;
  durationMs?: number;
  /** The enforcement type reported to the client. @defaultValue 'DEFAULT' */
  reason?: string;
}

/** Turns API input into a lock, or throws SimError 400. */
export function lockFrom(input: RestrictInput, now = Date.now()): ReachoutLock {
  const { until, durationMs, reason } = input;
  if ((until === undefined) === (durationMs === undefined))
    throw new SimError('give exactly one of until and durationMs', 400);
  let end: number;
  if (durationMs !== undefined) {
    if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs <= 0)
      throw new SimError('durationMs must be a number > 0', 400);
    end = now + durationMs;
  } else {
    end = typeof until === 'number' ? until : Date.parse(String(until));
    if (!Number.isFinite(end)) throw new SimError('until must be an ISO date or epoch milliseconds', 400);
    if (end <= now) throw new SimError('until must be in the future', 400);
  }
  if (reason !== undefined && (typeof reason !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(reason)))
    throw new SimError('reason must be an enforcement type such as DEFAULT or BIZ_QUALITY', 400);
  return { until: end, enforcementType: reason ?? 'DEFAULT' };
}

const ALL = '*';
const seconds = (ms: number): string => String(Math.ceil(ms / 1000));

/**
 * The server's anti-spam state per account: reach-out time locks, the new-chat cap, who an
 * account already has a conversation with, and the privacy tokens contacts issued to it.
 *
 * Like WhatsApp, a lock refuses 1:1 messages that carry no valid trusted-contact token
 * (`<tctoken>`): a contact's phone issues one when it writes to the account, so established
 * chats keep working while cold reach-outs get 463.
 *
 * Strict first contacts (`setStrict`, the control API's POST /reachout/strict): a first contact
 * must carry a valid tctoken or a valid `<cstoken>` (whatsmeow 82d579d5: HMAC-SHA256 of the
 * account's NCT salt over the recipient's LID, first-contacts.ts), or it is refused with 463 — as
 * WhatsApp refuses first contacts without a token in 2026. Off (the default), tokens are read
 * and reported but not required.
 */
export class Reachout {
  private readonly locks = new Map<string, ReachoutLock & { timer: NodeJS.Timeout }>();
  private readonly caps = new Map<string, number>();
  private readonly newChats = new Map<string, number[]>();
  private readonly chats = new Map<string, Set<string>>();
  private readonly tokens = new Map<string, Map<string, IssuedToken>>();
  /** Accounts (phones, or ALL) whose first contacts need a valid token. */
  private readonly strict = new Set<string>();

  constructor(private readonly events: ReachoutEvents) {}

  restrict(phone: string, lock: ReachoutLock): void {
    this.endTimer(phone);
    const arm = (): NodeJS.Timeout =>
      setTimeout(
        () => {
          const current = this.locks.get(phone);
          if (!current) return;
          if (Date.now() < current.until) current.timer = arm();
          else this.lift(phone);
        },
        Math.min(Math.max(lock.until - Date.now(), 0), MAX_TIMER_MS),
      ).unref();
    this.locks.set(phone, { ...lock, timer: arm() });
    this.events.lockChanged(phone);
  }

  lock(phone: string): ReachoutLock | undefined {
    const lock = this.locks.get(phone);
    return lock && Date.now() < lock.until
      ? { until: lock.until, enforcementType: lock.enforcementType }
      : undefined;
  }

  /** Sets (or with null removes) the cap of one account, or of all when `phone` is absent. */
  setCap(phone: string | undefined, cap: number | null): void {
    if (cap === null) this.caps.delete(phone ?? ALL);
    else this.caps.set(phone ?? ALL, cap);
  }

  cap(phone: string): number | undefined {
    return this.caps.get(phone) ?? this.caps.get(ALL);
  }

  /**
   * Disarms locks (their devices hear that the lock was lifted), caps and strict first contacts;
   * history stays.
   * Returns the phones whose cap was removed, or 'all' when a cap for every account was.
   */
  clearFaults(): string[] | 'all' {
    for (const phone of [...this.locks.keys()]) this.lift(phone);
    this.strict.clear();
    const capped = [...this.caps.keys()];
    this.caps.clear();
    return capped.includes(ALL) ? 'all' : capped;
  }

  /** Strict first contacts on or off, for one account or (no phone) for all. */
  setStrict(phone: string | undefined, on: boolean): void {
    if (on) this.strict.add(phone ?? ALL);
    else if (phone) this.strict.delete(phone);
    else this.strict.clear();
  }

  isStrict(phone: string): boolean {
    return this.strict.has(ALL) || this.strict.has(phone);
  }

  strictView(): { all: boolean; phones: string[] } {
    return { all: this.strict.has(ALL), phones: [...this.strict].filter((p) => p !== ALL) };
  }

  /**
   * Decides on a message from `account` to `recipient` before it is acked: the error code to
   * ack with (none: it goes through, and may open a new chat), with what it saw of the tokens.
   */
  admit(account: SimUser, recipient: SimUser | undefined, tokens: PrivacyTokens): Admission {
    if (!recipient || recipient === account) return { firstContact: false, tctokenValid: false };
    const issued = this.tokens.get(account.phone)?.get(recipient.phone);
    const tctokenValid = !!issued && !!tokens.tctoken && issued.token.equals(tokens.tctoken);
    const cstokenValid = tokens.cstoken ? csTokenValid(account, recipient, tokens.cstoken) : undefined;
    const chats = this.chatsOf(account.phone);
    const seen = { firstContact: !chats.has(recipient.phone), tctokenValid, cstokenValid };
    if (this.lock(account.phone) && !tctokenValid) return { ...seen, error: REACHOUT_REFUSED };
    if (!seen.firstContact) return seen;
    if (this.isStrict(account.phone) && !tctokenValid && !cstokenValid)
      return { ...seen, error: REACHOUT_REFUSED };
    const cap = this.cap(account.phone);
    const used = this.recentNewChats(account.phone);
    if (cap !== undefined && used.length >= cap) return { ...seen, error: REACHOUT_REFUSED };
    chats.add(recipient.phone);
    used.push(Date.now());
    this.events.newChatOpened(account.phone);
    return seen;
  }

  /**
   * A contact writes to an account: from now on they have a chat, and the contact's phone has
   * issued the account a trusted-contact token. Returns the token and the devices that have
   * not been told about it yet.
   */
  contactWrote(contact: SimUser, account: SimUser): { token: Buffer; t: string; untold: number[] } {
    this.chatsOf(account.phone).add(contact.phone);
    let byContact = this.tokens.get(account.phone);
    if (!byContact) this.tokens.set(account.phone, (byContact = new Map()));
    let issued = byContact.get(contact.phone);
    if (!issued) {
      issued = { token: randomBytes(24), t: seconds(Date.now()), devices: new Set() };
      byContact.set(contact.phone, issued);
    }
    const untold = [...account.devices.keys()].filter((id) => !issued.devices.has(id));
    for (const id of untold) issued.devices.add(id);
    return { token: issued.token, t: issued.t, untold };
  }

  /** Whether `token` is the trusted-contact token `contact`'s phone issued to `account` (outside messages: group-privacy.ts). */
  tctokenValid(account: string, contact: string, token: Buffer): boolean {
    const issued = this.tokens.get(account)?.get(contact);
    return !!issued && issued.token.equals(token);
  }

  capInfo(phone: string): CapInfo {
    const cap = this.cap(phone);
    const used = this.recentNewChats(phone);
    // the window rolls: the oldest new chat of the last day is the one whose slot frees first
    const start = used[0] ?? Date.now();
    return {
      total_quota: cap ?? -1,
      used_quota: used.length,
      cycle_start_timestamp: seconds(start),
      cycle_end_timestamp: seconds(start + DAY_MS),
      server_sent_timestamp: seconds(Date.now()),
      capping_status: cap !== undefined && used.length >= cap ? 'CAPPED' : 'NONE',
      ote_status: 'NOT_ELIGIBLE',
      mv_status: 'NOT_ELIGIBLE',
    };
  }

  view(phone: string): RestrictionsView {
    const lock = this.lock(phone);
    const cap = this.cap(phone);
    return {
      phone,
      ...(lock
        ? { restrictedUntil: new Date(lock.until).toISOString(), enforcementType: lock.enforcementType }
        : {}),
      newChatsToday: this.recentNewChats(phone).length,
      ...(cap !== undefined ? { newChatCap: cap } : {}),
    };
  }

  close(): void {
    for (const phone of [...this.locks.keys()]) this.endTimer(phone);
    this.locks.clear();
  }

  private lift(phone: string): void {
    this.endTimer(phone);
    if (this.locks.delete(phone)) this.events.lockChanged(phone);
  }

  private endTimer(phone: string): void {
    const lock = this.locks.get(phone);
    if (lock) clearTimeout(lock.timer);
  }

  private chatsOf(phone: string): Set<string> {
    let chats = this.chats.get(phone);
    if (!chats) this.chats.set(phone, (chats = new Set()));
    return chats;
  }

  /** Times of the new chats in the last 24 hours, oldest first (older ones are dropped). */
  private recentNewChats(phone: string): number[] {
    let times = this.newChats.get(phone);
    if (!times) this.newChats.set(phone, (times = []));
    const cutoff = Date.now() - DAY_MS;
    while (times.length && times[0]! <= cutoff) times.shift();
    return times;
  }
}
