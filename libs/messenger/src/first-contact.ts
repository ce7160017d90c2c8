import { createHmac } from 'node:crypto';
import { isLidAddress, isPersonAddress, userOfJid } from '@mgw/contracts';
import { isJidBot, jidDecode, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import { isTcTokenExpired } from '@whiskeysockets/baileys/lib/Utils/tc-token-utils.js';
import { serializeError, type Logger } from '@mgw/common';
import {
  forgetNctSalt,
  readNctSalt,
  storeNctSalt,
  warmNctSalt,
  type NctSaltChange,
  type SaltKeyStore,
} from './nct-salt.js';
import type { WASocket } from './socket.js';

/**
 * How a one-to-one message is addressed in 2026, as whatsmeow sends it:
 *
 * - **LID first** (whatsmeow 4f8f64e0, "send: always use LID for DMs"): the stanza goes `to` the
 *   contact's LID whenever the device knows it, with `peer_recipient_pn` = the contact's phone JID
 *   when that is known too; a contact whose LID is unknown is still written to by phone.
 * - **A privacy token on a first contact** (whatsmeow 82d579d5, "client: add cstoken support"):
 *   Baileys attaches the contact's `<tctoken>` (issued when the contact wrote to us) when it has a
 *   valid one and the server's `privacyTokenOn1to1` prop is on; when it will not, a device that
 *   holds the account's NCT salt (nct-salt.ts) attaches `<cstoken>` = HMAC-SHA256(salt, the
 *   recipient's LID as `<digits>@lid`) — only for a recipient whose LID is known, never both.
 *
 * The tctoken decision is Baileys' own, read the way it reads it (`relayMessage` in
 * Socket/messages-send.js): the `tctoken` auth key under the recipient's LID (else its JID), the
 * expiry rule of Utils/tc-token-utils.js (`isTcTokenExpired`: 4 weekly buckets), and the prop.
 */

/** The privacy token a message carried: Baileys' tctoken, our cstoken, or none. */
export type PrivacyToken = 'tctoken' | 'cstoken' | 'none';

/** What a one-to-one send adds to Baileys' relay. */
export interface DirectSend {
  /** Where the stanza goes: the contact's LID when known, else the JID asked. */
  to: string;
  /** `peer_recipient_pn` when the stanza goes to a LID whose phone is known. */
  attrs: Record<string, string>;
  /** `<cstoken>`, when it is the token the message carries. */
  nodes: BinaryNode[];
  token: PrivacyToken;
  /** Whether the device held an NCT salt when it sent. */
  salt: boolean;
}

export interface FirstContactOptions {
  logger: Logger;
  /**
   * The longest a tokenless one-to-one message waits for the salt the device asks for (below).
   * @defaultValue SALT_WAIT_MS
   */
  saltWaitMs?: number;
  /** The least time between two asks for the salt. @defaultValue SALT_ASK_INTERVAL_MS */
  saltAskIntervalMs?: number;
}

/** How long a message that would go without any token waits for the salt being asked for. */
export const SALT_WAIT_MS = 10_000;
/** A device without a salt asks for it at most this often (a full resync of one collection). */
export const SALT_ASK_INTERVAL_MS = 10 * 60_000;
/** The app-state collection that carries `nct_salt_sync` (whatsapp-rust: WAWebNctSaltSync, RegularHigh). */
const SALT_COLLECTION = 'regular_high';

/** The device's key store (sealed, fenced), when its socket was started. */
export type KeyStoreOf = () => SaltKeyStore | undefined;

/** cstoken = HMAC-SHA256(nctSalt, recipient LID string "<digits>@lid") (whatsmeow 82d579d5, cstoken.go). */
export function csToken(salt: Uint8Array, lid: string): Buffer {
  return createHmac('sha256', salt).update(lid).digest();
}

/** A one-to-one chat with a person (not a group, a status, a channel, a bot or the PSA). */
export function isDirectChat(jid: string): boolean {
  return isPersonAddress(jid) && !isJidBot(jid) && userOfJid(jid) !== '0';
}

/** A contact's tctoken as Baileys keeps it (`tctoken` auth keys). */
interface TcTokenEntry {
  token?: Uint8Array;
  timestamp?: number | string;
  senderTimestamp?: number;
}

/**
 * How long Baileys' relay may take between our read of a tctoken and its own (its device lookups,
 * sessions and encryption come first): a token expiring within it is not counted on.
 */
export const TCTOKEN_RELAY_MARGIN_MS = 5 * 60_000;
const TC_TOKEN_BUCKET_SECONDS = 7 * 86_400;
const TC_TOKEN_BUCKETS = 4;

/** Baileys' `isTcTokenExpired` (Utils/tc-token-utils.js: four weekly buckets), at `atMs` rather than now. */
export function tcTokenExpiredAt(timestamp: number | string | undefined, atMs: number): boolean {
  const ts = typeof timestamp === 'string' ? parseInt(timestamp, 10) : timestamp;
  if (ts === undefined || Number.isNaN(ts)) return true;
  const bucket = Math.floor(Math.floor(atMs / 1000) / TC_TOKEN_BUCKET_SECONDS);
  return ts < (bucket - (TC_TOKEN_BUCKETS - 1)) * TC_TOKEN_BUCKET_SECONDS;
}

export class FirstContacts {
  /** The ask for the salt in flight or last made (settles once it is answered). */
  private asking: Promise<void> | undefined;
  private askInFlight = false;
  /** When a socket's opening, and when a message, last asked (each bounded on its own). */
  private askedAt = { open: -Infinity, message: -Infinity };
  /** The last salt change from the app-state sync being kept. */
  private keeping: Promise<void> = Promise.resolve();

  constructor(
    private readonly keyStore: KeyStoreOf,
    private readonly opts: FirstContactOptions,
  ) {}

  /**
   * A device without the account's NCT salt asks for it. Neither whatsmeow nor whatsapp-rust has a
   * request for it: they take it from a history sync (whatsmeow `DownloadHistorySync`, message.go)
   * or the app-state mutation `nct_salt_sync` of `regular_high` (appstate.go; whatsapp-rust
   * client.rs, "WAWebNctSaltSync, syncd collection RegularHigh", the history's salt a backfill
   * only). So asking is syncing that collection again from its start (its stored version dropped,
   * Baileys then asks for a snapshot): whatever salt the phone set, even before this device linked
   * or in a change it was never told of, is among its mutations. Asked when a socket opens
   * (`open`, once per opening) and when a message would go without any token (`message`, at most
   * once per `saltAskIntervalMs`: a pooled device without a salt gets no share and so no such
   * message, hence the ask at open); an ask in flight is joined. Resolves once the answer (and a
   * salt in it) is kept.
   */
  askForSalt(sock: WASocket, why: 'open' | 'message' = 'message'): Promise<void> {
    const now = Date.now();
    if (this.asking && this.askInFlight) return this.asking;
    const interval = why === 'open' ? 0 : (this.opts.saltAskIntervalMs ?? SALT_ASK_INTERVAL_MS);
    if (this.asking && now - this.askedAt[why] < interval) return this.asking;
    this.askedAt[why] = now;
    this.askInFlight = true;
    this.asking = (async () => {
      const keys = this.keys();
      if (await readNctSalt(keys)) return;
      this.opts.logger.info('no NCT salt: asking for it (app-state resync of regular_high from its start)');
      await keys.set({ 'app-state-sync-version': { [SALT_COLLECTION]: null } });
      // A test's fake socket cannot sync.
      await sock.resyncAppState?.([SALT_COLLECTION], false);
      await this.keeping;
    })()
      .catch((err: unknown) => {
        this.opts.logger.warn('NCT salt not asked for', { err: serializeError(err) });
      })
      .finally(() => {
        this.askInFlight = false;
      });
    return this.asking;
  }

  /**
   * The salt, asked for when the device has none (`askForSalt`) and waited for at most
   * `saltWaitMs`: until the answer came, or a salt arrived any way (a history chunk, app state).
   */
  private async saltOrAsk(sock: WASocket, keys: SaltKeyStore): Promise<Buffer | undefined> {
    const salt = await readNctSalt(keys);
    if (salt) return salt;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.opts.saltWaitMs ?? SALT_WAIT_MS);
    });
    try {
      await Promise.race([this.askForSalt(sock, 'message'), bound]);
    } finally {
      clearTimeout(timer);
    }
    return readNctSalt(keys);
  }

  /** How a one-to-one message to `jid` (a phone or LID JID, `isDirectChat`) goes. */
  async address(sock: WASocket, jid: string): Promise<DirectSend> {
    const keys = this.keys();
    const known = await this.identity(sock, keys, jid);
    const { phone } = known;
    let { lid } = known;
    const to = lid ?? jid;
    const attrs: Record<string, string> =
      lid && phone ? { peer_recipient_pn: jidEncode(phone, 's.whatsapp.net') } : {};
    // Baileys looks the tctoken up under the destination's LID, which is `to` when one is known.
    const tc = await this.tcToken(sock, keys, to);
    // Without a tctoken to count on, the cstoken is all the message can carry: its salt is asked
    // for when the device has none, and waited for a bounded time.
    const salt = tc === 'valid' ? await readNctSalt(keys) : await this.saltOrAsk(sock, keys);
    if (salt && !lid && phone && tc === 'none') {
      // A cstoken is made of the LID (whatsmeow generateCsToken sends none without it): a lookup
      // that did not answer is asked once more before the message would go without any token.
      lid = (await this.identity(sock, keys, jid)).lid;
      if (lid) {
        this.opts.logger.info(
          "contact's LID resolved on a second lookup: the first contact carries a cstoken",
        );
        return this.withCstoken(lid, phone, salt);
      }
    }
    const base = { to, attrs, nodes: [], salt: !!salt };
    if (tc === 'valid' || (tc === 'expiring' && !(salt && lid))) return { ...base, token: 'tctoken' };
    if (tc === 'expiring') {
      // Read once, decided once: a token that may expire before Baileys' relay reads it again
      // (its own expiry rule, at its own moment) is dropped now as Baileys drops an expired one,
      // so the relay attaches none and the message carries the cstoken: never neither.
      await this.dropTcToken(keys, to);
    }
    if (salt && lid) {
      return {
        ...base,
        nodes: [{ tag: 'cstoken', attrs: {}, content: csToken(salt, lid) }],
        token: 'cstoken',
      };
    }
    return { ...base, token: 'none' };
  }

  /** A message to `lid` (its phone beside it) with the cstoken made of it. */
  private withCstoken(lid: string, phone: string, salt: Buffer): DirectSend {
    return {
      to: lid,
      attrs: { peer_recipient_pn: jidEncode(phone, 's.whatsapp.net') },
      nodes: [{ tag: 'cstoken', attrs: {}, content: csToken(salt, lid) }],
      token: 'cstoken',
      salt: true,
    };
  }

  /**
   * Starts, in one tick (one round trip on the auto-pipelined connection), the reads of the keys
   * `address` and Baileys' relay make one after another for a message to `jid`: the phone's LID
   * map entry, the NCT salt and, when the LID is known already (`lid`, from the contact cache),
   * the contact's tctoken and its main device's session. Each is warmed into the key cache (a key
   * not there is cached as absent; a warm-up counts no hit or miss, the lookup it serves does), so
   * those reads find it there; a write meanwhile is newer and wins (the key store keeps writes in
   * flight aside). Nothing waits for it and nothing fails by it.
   */
  prefetch(jid: string, lid?: string): void {
    const keys = this.keyStore();
    const user = jidDecode(jid)?.user;
    if (!keys || !user || !isDirectChat(jid)) return;
    const lidUser = isLidAddress(jid) ? user : lid && isLidAddress(lid) ? jidDecode(lid)?.user : undefined;
    // The map's entries both ways: `identity` reads one, Baileys' storeLIDPNMappings the other.
    const mapIds = [...(isLidAddress(jid) ? [] : [user]), ...(lidUser ? [`${lidUser}_reverse`] : [])];
    const reads = [keys.warm('lid-mapping', mapIds), warmNctSalt(keys)];
    if (lidUser) {
      // Baileys' signal address of a LID's device 0 (jidToSignalProtocolAddress: `<user>_1.0`).
      reads.push(keys.warm('tctoken', [`${lidUser}@lid`]), keys.warm('session', [`${lidUser}_1.0`]));
    }
    for (const read of reads) read.catch(() => undefined);
  }

  async hasSalt(): Promise<boolean> {
    return !!(await readNctSalt(this.keys()));
  }

  /** Keeps the account's NCT salt (a history sync's field 19, an app-state SET). */
  async rememberSalt(salt: Uint8Array, source: 'history_sync' | 'app_state'): Promise<boolean> {
    const kept = await storeNctSalt(this.keys(), salt);
    if (kept) this.opts.logger.info('NCT salt kept (first contacts carry a cstoken)', { source });
    return kept;
  }

  /** Forgets it (an app-state REMOVE): first contacts go without a cstoken until a new one comes. */
  async forgetSalt(source: 'app_state'): Promise<void> {
    await forgetNctSalt(this.keys());
    this.opts.logger.info('NCT salt forgotten', { source });
  }

  /** The app-state sync's `nct_salt_sync`: a SET keeps the new salt, a REMOVE forgets it (whatsmeow 82d579d5). */
  async onSaltSync(change: NonNullable<NctSaltChange>): Promise<void> {
    const kept = this.keepSaltChange(change);
    this.keeping = kept;
    await kept;
  }

  private async keepSaltChange(change: NonNullable<NctSaltChange>): Promise<void> {
    try {
      if ('salt' in change) await this.rememberSalt(change.salt, 'app_state');
      else await this.forgetSalt('app_state');
    } catch (err) {
      this.opts.logger.warn('NCT salt change from the app-state sync not kept', { err: serializeError(err) });
    }
  }

  private keys(): SaltKeyStore {
    const keys = this.keyStore();
    if (!keys) throw new Error('the device socket was not started: its key store is not loaded');
    return keys;
  }

  /**
   * The contact's phone and LID: Baileys' own phone <-> LID map (its `lid-mapping` keys, which the
   * number lookups, incoming messages, notifications and its device-list lookups fill), as
   * whatsmeow reads its LID store; a number the map does not know is asked of WhatsApp through
   * Baileys' `getLIDForPN` (a usync, stored in the map) as whatsmeow 4f8f64e0 fills its LID cache —
   * the query Baileys' relay would make for the number's tctoken anyway. Nothing older is trusted
   * over the map: a pair it dropped (a number that changed hands) is not brought back from a
   * cached lookup answer. Unanswered, the message goes by phone.
   */
  private async identity(
    sock: WASocket,
    keys: SaltKeyStore,
    jid: string,
  ): Promise<{ phone?: string; lid?: string }> {
    const user = jidDecode(jid)?.user;
    if (!user) return {};
    if (isLidAddress(jid)) {
      const phone = (await keys.get('lid-mapping', [`${user}_reverse`]))[`${user}_reverse`];
      return { lid: `${user}@lid`, ...(typeof phone === 'string' && phone ? { phone } : {}) };
    }
    const stored = (await keys.get('lid-mapping', [user]))[user];
    if (typeof stored === 'string' && stored) return { phone: user, lid: `${stored}@lid` };
    // A test's fake socket has no signal repository.
    const asked = await sock.signalRepository?.lidMapping
      .getLIDForPN(jidEncode(user, 's.whatsapp.net'))
      .catch((err: unknown) => {
        this.opts.logger.warn('LID of a number not resolved: the message goes by phone', {
          err: serializeError(err),
        });
        return null;
      });
    const lidUser = asked ? jidDecode(asked)?.user : undefined;
    return lidUser ? { phone: user, lid: `${lidUser}@lid` } : { phone: user };
  }

  /**
   * Whether Baileys' relay will attach the contact's tctoken (its own rule, see above): `valid`, and
   * still so `TCTOKEN_RELAY_MARGIN_MS` from now; `expiring` within that margin (the relay, which
   * reads it again later, might find it expired); `none`.
   */
  private async tcToken(
    sock: WASocket,
    keys: SaltKeyStore,
    tokenJid: string,
  ): Promise<'valid' | 'expiring' | 'none'> {
    // A test's fake socket has no server props: no tctoken then, as with the prop off.
    if (!sock.serverProps?.privacyTokenOn1to1) return 'none';
    const entry = (await keys.get('tctoken', [tokenJid]))[tokenJid] as TcTokenEntry | undefined;
    if (!entry?.token?.length || isTcTokenExpired(entry.timestamp)) return 'none';
    return tcTokenExpiredAt(entry.timestamp, Date.now() + TCTOKEN_RELAY_MARGIN_MS) ? 'expiring' : 'valid';
  }

  /** Drops the contact's tctoken as Baileys drops an expired one (its issuance time kept). */
  private async dropTcToken(keys: SaltKeyStore, tokenJid: string): Promise<void> {
    const entry = (await keys.get('tctoken', [tokenJid]))[tokenJid] as TcTokenEntry | undefined;
    const cleared =
      entry?.senderTimestamp !== undefined
        ? { token: Buffer.alloc(0), senderTimestamp: entry.senderTimestamp }
        : null;
    await keys.set({ tctoken: { [tokenJid]: cleared } });
  }
}
