import { encodeBigEndian, type BinaryNode } from '@whiskeysockets/baileys';
import { noteUndecryptable, type CompanionDevice, type SimUser } from './directory.js';
import type { Faults, UndecryptableMode } from './faults.js';
import { PhoneSignal, type PreKeyBundle } from './phone-signal.js';
import type { SimLogger } from './logger.js';
import type { DeliveryContext } from './sim-context.js';
import { node, unixSeconds } from './stanza.js';

/** What the retry receipts need of the simulator. */
export interface RetryReceiptsContext extends DeliveryContext {
  readonly faults: Faults;
  readonly logger: SimLogger;
}

/**
 * How many retry receipts a phone sends for one message before it gives up and shows "Waiting for
 * this message": Baileys' receiver stops after 5 (`maxMsgRetryCount`), whatsmeow's after 4.
 */
export const PHONE_RETRY_MAX = 5;

const KEY_BUNDLE_TYPE = Buffer.from([5]);

/** One message a contact's phone is failing to decrypt (an undecryptable fault took it). */
interface FailingMessage {
  mode: UndecryptableMode;
  /** Retry receipts sent so far (the next one's `count` is this plus one). */
  asks: number;
  delayMs: number;
  /** The `t` of the first copy (a retry receipt names it). */
  t: string;
}

/** What the phone does with one arriving copy of a message. */
export interface CopyVerdict {
  /** The copy is not read: the phone asks for it again (`ask`) or, past its bound, gives up. */
  fails: boolean;
}

const failing = new WeakMap<SimUser, Map<string, FailingMessage>>();

/**
 * Decides, before a contact's phone decrypts a copy of message `id`, whether that copy fails (an
 * undecryptable fault of the contact: `once` fails the first copy, `always` every copy,
 * `reinstalled` re-installs the phone — a new identity, registration and prekeys, no sessions —
 * so the first copy cannot be decrypted and the retry receipt carries the new keys).
 * Call it in arrival order, before `user.signal.decrypt` (a re-install replaces the signal).
 */
export function copyVerdict(
  sim: RetryReceiptsContext,
  user: SimUser,
  id: string,
  t: string | undefined,
): CopyVerdict {
  let byId = failing.get(user);
  let message = byId?.get(id);
  if (!message) {
    const fault = sim.faults.takeUndecryptable(user.phone);
    if (!fault) return { fails: false };
    message = { mode: fault.mode ?? 'once', asks: 0, delayMs: fault.delayMs ?? 50, t: t ?? unixSeconds() };
    if (!byId) failing.set(user, (byId = new Map()));
    byId.set(id, message);
    if (message.mode === 'reinstalled') {
      user.signal = new PhoneSignal();
      sim.logger.info({ phone: user.phone }, 'contact phone re-installed (new identity)');
    }
  }
  const fails = message.mode === 'always' || message.asks === 0;
  if (!fails) byId!.delete(id);
  return { fails };
}

/**
 * The copy failed: noted as undecryptable, and the phone sends the sending device a retry
 * receipt (as WhatsApp's and Baileys' phones do: `<retry count id t v/>`, its `<registration>`,
 * and from the second ask on — or at once after a re-install — its keys, so the sender can start
 * a new session). Past PHONE_RETRY_MAX asks it gives up.
 */
export function askAgain(
  sim: RetryReceiptsContext,
  user: SimUser,
  device: CompanionDevice,
  chatJid: string,
  id: string,
  from: string,
  err: unknown,
): void {
  const message = failing.get(user)?.get(id);
  noteUndecryptable(user, id, from, err);
  if (!message) return;
  if (message.asks >= PHONE_RETRY_MAX) {
    // it stays failing: a later copy is not read either
    sim.logger.info(
      { id, phone: user.phone },
      'contact phone gave up on a message (waiting for this message)',
    );
    return;
  }
  const count = ++message.asks;
  const content: BinaryNode[] = [
    node('retry', { count: String(count), id, t: message.t, v: '1' }),
    node('registration', {}, encodeBigEndian(user.signal.registrationId)),
  ];
  if (count > 1 || message.mode === 'reinstalled') content.push(keysNode(user.signal.freshBundle()));
  const receipt = node('receipt', { id, type: 'retry', from: chatJid, t: unixSeconds() }, content);
  setTimeout(() => sim.deliverToDevice(device, receipt), message.delayMs).unref();
}

/** The `<keys>` of a retry receipt: the phone's identity, a one-time prekey and its signed prekey. */
function keysNode(bundle: PreKeyBundle): BinaryNode {
  return node('keys', {}, [
    node('type', {}, KEY_BUNDLE_TYPE),
    node('identity', {}, bundle.identityKey),
    node('key', {}, [
      node('id', {}, encodeBigEndian(bundle.preKey!.keyId, 3)),
      node('value', {}, bundle.preKey!.publicKey),
    ]),
    node('skey', {}, [
      node('id', {}, encodeBigEndian(bundle.signedPreKey.keyId, 3)),
      node('value', {}, bundle.signedPreKey.publicKey),
      node('signature', {}, bundle.signedPreKey.signature),
    ]),
  ]);
}

/** Forgets the messages being failed (the faults were cleared). */
export function forgetFailing(user: SimUser): void {
  failing.delete(user);
}
