/**
 * First contacts and LID-first one-to-one messages, as WhatsApp has them in late 2026 and
 * whatsmeow reads them:
 *
 * - **The NCT salt** (whatsmeow 82d579d5, "client: add cstoken support"): each account has a
 *   secret salt; the phone hands it to its linked devices in a history sync (`HistorySync` field
 *   19, `nctSalt`). Here the first history sync after a device links carries it (history-sync.ts),
 *   and any later one while a device of the account has not had it; Baileys rc14's proto has no
 *   field 19, so it is appended to the encoded message raw.
 * - **The cstoken**: a device proves a first contact with `<cstoken>` = HMAC-SHA256(salt, the
 *   recipient's LID as `<digits>@lid`), sent when it has no tctoken of the contact. The server
 *   checks it (reachout.ts `admit`); with strict first contacts on (POST /reachout/strict), a
 *   first contact with neither a valid tctoken nor a valid cstoken is refused with 463.
 * - **LID first** (whatsmeow 4f8f64e0, "send: always use LID for DMs"): a one-to-one message goes
 *   `to` the contact's LID with `peer_recipient_pn` = its phone JID. The server checks that the
 *   phone is the LID's (a stanza field it cannot accept: 479, whatsapp-rust's "SmaxInvalid").
 * - **The app-state `nct_salt_sync`** (whatsmeow 82d579d5, appstate.go): the phone may also set a
 *   new salt (SET, index `["nct_salt_sync"]`, `SyncActionValue` field 80 `nctSaltSyncAction.salt`)
 *   or withdraw it (REMOVE) through the app-state sync (`regular_high`, as whatsapp-rust files
 *   it): POST /accounts/:phone/nct-salt `{ op }`. Field 80 is not in Baileys rc14's proto either:
 *   the values made here are encoded with it (`withNctSalt`).
 * - Each account's one-to-one messages are recorded as they came (`to`, `peer_recipient_pn`, the
 *   token, the verdict): GET /accounts/:phone/direct-messages.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { jidDecode, jidEncode, proto, type BinaryNode } from '@whiskeysockets/baileys';
import type { CompanionDevice, SimUser } from './directory.js';
import type { Admission } from './admission.js';
import type { SimAppState } from './app-state.js';
import type { DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';

/**
 * The strict first contacts switch of the reach-out rules: the part of Reachout (reachout.ts, which
 * imports this module) the routes here use.
 */
export interface StrictFirstContacts {
  setStrict(phone: string | undefined, on: boolean): void;
  strictView(): { all: boolean; phones: string[] };
}

/** What the first contacts need of the simulator. */
export interface FirstContactsContext extends DirectoryContext {
  readonly appState: SimAppState;
  readonly reachout: StrictFirstContacts;
}

const NCT_SALT_BYTES = 32;
/** `HistorySync.nctSalt` (WAWebProtobufsHistorySync.proto). */
const NCT_SALT_FIELD = 19;
/** WhatsApp's answer to a stanza field it cannot accept (whatsapp-rust: 479 "SmaxInvalid"). */
export const STANZA_FIELD_INVALID = 479;
/** One-to-one messages recorded per account (the oldest dropped). */
const MAX_DIRECT_LOG = 10_000;

/** The account's NCT salt, made on first use (a state file keeps it: persistence.ts). */
export function nctSaltOf(account: SimUser): Buffer {
  return (account.nctSalt ??= randomBytes(NCT_SALT_BYTES));
}

/** cstoken = HMAC-SHA256(nctSalt, recipient LID string "<digits>@lid") (whatsmeow cstoken.go). */
export function csTokenOf(salt: Uint8Array, lid: string): Buffer {
  return createHmac('sha256', salt).update(lid).digest();
}

export function csTokenValid(account: SimUser, recipient: SimUser, cstoken: Buffer): boolean {
  const expected = csTokenOf(nctSaltOf(account), jidEncode(recipient.lid, 'lid'));
  return cstoken.length === expected.length && timingSafeEqual(cstoken, expected);
}

/** SyncActionValue.nctSaltSyncAction (WAWebProtobufSyncAction.proto); SyncActionData.value. */
const NCT_SALT_SYNC_ACTION_FIELD = 80;
const SYNC_ACTION_DATA_VALUE_FIELD = 2;
/**
 * The salts of the values `withNctSalt` made, by each value's timestamp (unique): Baileys' encoder
 * rebuilds the value from a plain object on its way (`fromObject`), so it is found by its content.
 */
const pendingSalts = new Map<string, Buffer>();
let lastStamp = 0;
const encodeSyncActionData = proto.SyncActionData.encode.bind(proto.SyncActionData);
// Baileys' encodeSyncdPatch encodes each mutation's SyncActionData with this: a value `withNctSalt`
// made is written with field 80 (an NctSaltSyncAction { salt = 1 }) after its known fields; any other
// is encoded as before. (Wrapping SyncActionValue.encode would not do: protobufjs resolves it through
// its shared root, which the last of several loads of Baileys' protos in one process owns.)
proto.SyncActionData.encode = (message, writer) => {
  const stamp = message.value?.timestamp;
  const salt = stamp != null ? pendingSalts.get(String(stamp)) : undefined;
  if (!salt || !message.value) return encodeSyncActionData(message, writer);
  const { index, padding, version } = message;
  const w = encodeSyncActionData(proto.SyncActionData.create({ index, padding, version }), writer);
  const action = Buffer.concat([varint((1 << 3) | 2), varint(salt.length), salt]);
  const value = Buffer.concat([
    proto.SyncActionValue.encode(message.value).finish(),
    varint((NCT_SALT_SYNC_ACTION_FIELD << 3) | 2),
    varint(action.length),
    action,
  ]);
  return w.uint32((SYNC_ACTION_DATA_VALUE_FIELD << 3) | 2).bytes(value);
};

/** A `SyncActionValue` whose encoding (by Baileys, while `salt` is pending) carries `nctSaltSyncAction.salt`. */
function withNctSalt(salt: Buffer | undefined): { value: proto.SyncActionValue; done: () => void } {
  const timestamp = (lastStamp = Math.max(Date.now(), lastStamp + 1));
  if (salt) pendingSalts.set(String(timestamp), salt);
  return {
    value: proto.SyncActionValue.create({ timestamp }),
    done: () => pendingSalts.delete(String(timestamp)),
  };
}

/**
 * The phone sets a new NCT salt for the account (`set`: a fresh one, rotated) or withdraws it
 * (`remove`) through the app-state sync: one `nct_salt_sync` patch in `regular_high`, told to the
 * devices (`server_sync`). Answers the collection's version.
 */
async function nctSaltSync(
  sim: FirstContactsContext,
  account: SimUser,
  op: 'set' | 'remove',
  tell = true,
): Promise<{ version: number }> {
  const set = op === 'set';
  if (set) account.nctSalt = randomBytes(NCT_SALT_BYTES);
  const { value, done } = withNctSalt(set ? account.nctSalt : undefined);
  try {
    const version = await sim.appState.phonePatch(
      account,
      {
        type: 'regular_high',
        index: ['nct_salt_sync'],
        syncAction: value,
        apiVersion: 1,
        operation: set ? proto.SyncdMutation.SyncdOperation.SET : proto.SyncdMutation.SyncdOperation.REMOVE,
      },
      { tell },
    );
    return { version };
  } finally {
    done();
  }
}

/** Devices that had their account's salt in a history sync (not kept across restarts: sent again). */
const saltDelivered = new WeakSet<CompanionDevice>();

/**
 * The salt a history sync to `account`'s devices carries: the account's, while one of its devices
 * has not had it (the first sync after a link), else none.
 */
export function saltForHistorySync(account: SimUser): Buffer | undefined {
  const devices = [...account.devices.values()];
  if (devices.every((d) => saltDelivered.has(d))) return undefined;
  for (const device of devices) saltDelivered.add(device);
  return nctSaltOf(account);
}

/** Field 19 (length-delimited) of a `HistorySync`, raw: appended to the message Baileys encoded. */
export function nctSaltField(salt: Uint8Array): Buffer {
  return Buffer.concat([varint((NCT_SALT_FIELD << 3) | 2), varint(salt.length), salt]);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

/**
 * A stanza to `recipient` by its LID whose `peer_recipient_pn` names another phone: not the
 * recipient WhatsApp knows (only checked when the stanza went to a LID and names a phone).
 */
export function peerRecipientMismatch(recipient: SimUser | undefined, stanza: BinaryNode): boolean {
  const pn = stanza.attrs.peer_recipient_pn;
  if (!pn || !recipient || jidDecode(stanza.attrs.to ?? '')?.server !== 'lid') return false;
  const phone = jidDecode(pn);
  return phone?.server !== 's.whatsapp.net' || phone.user !== recipient.phone;
}

/** One one-to-one message from a linked device, as the server saw it. */
export interface DirectMessageView {
  id: string;
  /** The stanza's `to`: the recipient's LID (`…@lid`) or phone JID. */
  to: string;
  peerRecipientPn?: string;
  /** The recipient's phone, when the simulator knows the recipient. */
  recipient?: string;
  token: 'tctoken' | 'cstoken' | 'none';
  tctokenValid: boolean;
  cstokenValid?: boolean;
  firstContact: boolean;
  /** The error it was acked with (463 refused, 479 a bad `peer_recipient_pn`, a fault's). */
  error?: number;
  at: string;
}

const directLogs = new WeakMap<SimUser, DirectMessageView[]>();

export function recordDirectMessage(
  account: SimUser,
  recipient: SimUser | undefined,
  stanza: BinaryNode,
  tokens: { tctoken?: Buffer; cstoken?: Buffer },
  admission: Admission | undefined,
  error: number | undefined,
): void {
  let log = directLogs.get(account);
  if (!log) directLogs.set(account, (log = []));
  const { id = '', to = '', peer_recipient_pn: pn } = stanza.attrs;
  log.push({
    id,
    to,
    ...(pn ? { peerRecipientPn: pn } : {}),
    ...(recipient ? { recipient: recipient.phone } : {}),
    token: tokens.tctoken ? 'tctoken' : tokens.cstoken ? 'cstoken' : 'none',
    tctokenValid: admission?.tctokenValid ?? false,
    ...(admission?.cstokenValid !== undefined ? { cstokenValid: admission.cstokenValid } : {}),
    firstContact: admission?.firstContact ?? false,
    ...(error !== undefined ? { error } : {}),
    at: new Date().toISOString(),
  });
  if (log.length > MAX_DIRECT_LOG) log.shift();
}

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

/**
 * The control API's routes: POST /reachout/strict `{ on, phone? }` (strict first contacts for one
 * account or all), GET /reachout/strict, GET /accounts/:phone/nct-salt (the account's salt,
 * base64, and whether each device had it), POST /accounts/:phone/nct-salt `{ op: set | remove }`
 * (the app-state sync) and GET /accounts/:phone/direct-messages.
 */
export function firstContactRoutes(sim: FirstContactsContext): Array<[string, RegExp, Handler]> {
  const account = (phone: string) => {
    const user = sim.directory.get(phone);
    if (!user) throw new SimError(`unknown account ${phone}`, 404);
    return user;
  };
  return [
    [
      'POST',
      /^\/reachout\/strict$/,
      (b) => {
        if (typeof b.on !== 'boolean') throw new SimError('on is required (true or false)', 400);
        if (b.phone !== undefined && (typeof b.phone !== 'string' || !/^[0-9]{5,20}$/.test(b.phone)))
          throw new SimError('phone must be digits', 400);
        sim.reachout.setStrict(b.phone as string | undefined, b.on);
        return sim.reachout.strictView();
      },
    ],
    ['GET', /^\/reachout\/strict$/, () => sim.reachout.strictView()],
    [
      'GET',
      /^\/accounts\/([^/]+)\/nct-salt$/,
      (_b, [phone]) => {
        const user = account(phone!);
        return {
          salt: nctSaltOf(user).toString('base64'),
          devices: [...user.devices.values()].map((d) => ({ id: d.id, delivered: saltDelivered.has(d) })),
        };
      },
    ],
    [
      'POST',
      /^\/accounts\/([^/]+)\/nct-salt$/,
      (b, [phone]) => {
        if (b.op !== 'set' && b.op !== 'remove') throw new SimError('op must be "set" or "remove"', 400);
        if (b.tell !== undefined && typeof b.tell !== 'boolean')
          throw new SimError('tell must be true or false', 400);
        return nctSaltSync(sim, account(phone!), b.op, b.tell !== false);
      },
    ],
    [
      'GET',
      /^\/accounts\/([^/]+)\/direct-messages$/,
      (_b, [phone]) => ({ messages: directLogs.get(account(phone!)) ?? [] }),
    ],
  ];
}
