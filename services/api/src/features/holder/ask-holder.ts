import { randomUUID } from 'node:crypto';
import type { DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import {
  NOBODY_HOLDS_DEVICE,
  type DeviceCommandAnswer,
  type DeviceCommandClient,
  type SessionStore,
} from '@mgw/store';

/**
 * Asking the device's holder: only the sender holding a device's lease has its WhatsApp socket,
 * so what needs the socket (a group change, a profile read, a read receipt, a download) is a
 * device command to it (libs/store device-commands.ts), and its reply is the answer. This is the
 * one way the API asks; it knows nothing of HTTP and says how the ask went as an outcome, which
 * each capability's routes turn into its statuses and the contract's errors (http/holder-errors.ts).
 */

/** A device command without its addressing (each member of the union on its own): what an asker says. */
export type Unaddressed<C extends DeviceCommand = DeviceCommand> = C extends DeviceCommand
  ? Omit<C, 'deviceId' | 'requestId'>
  : never;

/**
 * How long an asker waits for the holder unless it says otherwise: one to three WhatsApp queries,
 * a change of up to 50 group members, a photo upload, or an app-state sync and its patch.
 */
export const HOLDER_WAIT_SECONDS = 30;

/** How an ask went. */
export type HolderOutcome<T> =
  /** The holder did it; `data` is what it answered. */
  | { ok: true; data: T }
  /** The device's session is not connected (it was not asked), or no process holds the device. */
  | { ok: false; reason: 'no_device' }
  /** No answer within the wait (a holder that hangs, or a sender that does not hold the device). */
  | { ok: false; reason: 'timeout' }
  /** The holder answered that its socket is not open now (it is reconnecting). */
  | { ok: false; reason: 'not_connected' }
  /** The holder answered that it failed: `code` is its reply's error, each capability's own. */
  | { ok: false; reason: 'failed'; code?: string };

/** Why a holder ask failed: every outcome but the answer (a use case's failures include these). */
export type HolderFailure = Extract<HolderOutcome<unknown>, { ok: false }>;

/** Why an ask did not get its answer. */
export type HolderReason = Extract<HolderOutcome<unknown>, { ok: false }>['reason'];

/**
 * What an asker needs of the device commands: the ask, which carries the command and waits for
 * its reply — libs/store's `DeviceCommandClient` (each wait takes a connection of its own), or a
 * test's in-memory holder (memory-holder.ts).
 */
export type HolderCommands = Pick<DeviceCommandClient, 'ask'>;

/** Who is asked, and what is checked before. */
export interface DeviceHolder {
  /** Carries the command and waits for the reply. */
  commands: HolderCommands;
  /**
   * The sessions: when given, a device whose session is not `connected` is not asked at all. Left
   * out by an asker that checked already (the number check), whose holder needs no open socket (a
   * download), or that goes by the device's lease (a proxy change).
   */
  sessions?: Pick<SessionStore, 'get'>;
}

export interface HolderAsk {
  /** Seconds to wait for the reply (HOLDER_WAIT_SECONDS unless given). */
  wait?: number;
  /** The command's id, when the asker names something after it (a fresh one otherwise). */
  requestId?: string;
  /**
   * The reply's `ok` alone is the answer: what the holder did lands elsewhere (a download's bytes,
   * the number check's cache) or its data is optional. Otherwise an `ok` without data is a failure.
   */
  okWithoutData?: boolean;
  /**
   * What the command names by reference (a picture, sealed under its request id): put once the
   * session check passed, taken away once the reply came or the wait ended.
   */
  handoff?: { put(): Promise<unknown>; remove(): Promise<unknown> };
}

/**
 * Asks the holder of `deviceId` to do `command` and waits for its reply. `T` is what the holder
 * answers for this command (the reply's `data`).
 */
export async function askHolder<T = DeviceCommandReply['data']>(
  holder: DeviceHolder,
  deviceId: string,
  command: Unaddressed,
  ask: HolderAsk = {},
): Promise<HolderOutcome<T>> {
  if (holder.sessions && (await holder.sessions.get(deviceId)).status !== 'connected')
    return { ok: false, reason: 'no_device' };
  const addressed = { ...command, deviceId, requestId: ask.requestId ?? randomUUID() } as DeviceCommand;
  let reply: DeviceCommandAnswer;
  await ask.handoff?.put();
  try {
    reply = await holder.commands.ask(addressed, ask.wait ?? HOLDER_WAIT_SECONDS);
  } finally {
    await ask.handoff?.remove();
  }
  if (reply === NOBODY_HOLDS_DEVICE) return { ok: false, reason: 'no_device' };
  if (!reply) return { ok: false, reason: 'timeout' };
  if (reply.ok && (ask.okWithoutData || reply.data)) return { ok: true, data: reply.data as T };
  if (reply.error === 'not-connected') return { ok: false, reason: 'not_connected' };
  return reply.error === undefined
    ? { ok: false, reason: 'failed' }
    : { ok: false, reason: 'failed', code: reply.error };
}
