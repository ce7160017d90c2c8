import type { LabelCommand, LabelCommandResult, LabelListed } from '@mgw/contracts';
import type { LabelStore, SessionStore } from '@mgw/store';
import { askHolder, type DeviceHolder, type HolderOutcome, type Unaddressed } from '../holder/index.js';

/**
 * A device's labels and its chats' archive, pin and mute: app-state patches only the sender
 * holding the device can make (with the key the phone shared), so each change asks it through a
 * device command. The reads answer from the label store, where the holder keeps what app-state
 * sync told it (libs/store labels/label-store.ts): no WhatsApp query, the cost of GET /status.
 */
export interface LabelDeps {
  /** The device's holder, asked with the session check. */
  holder: DeviceHolder;
  sessions: Pick<SessionStore, 'get'>;
  /** What the reads and the edits' lookups take of the label store (an in-memory one in tests). */
  store: Pick<LabelStore, 'get' | 'list' | 'ofChat' | 'chats'>;
}

/** No account is linked (logged out, or never): what the device kept went with its logout. */
export type NotLinked = { ok: false; reason: 'not_linked' };
/** The device never saw a label of that id, or it was deleted. */
export type UnknownLabel = { ok: false; reason: 'unknown_label' };

/** Whether an account is linked to the device (connected, or reconnecting). */
export async function linked(deps: Pick<LabelDeps, 'sessions'>, deviceId: string): Promise<boolean> {
  return (await deps.sessions.get(deviceId)).status !== 'disconnected';
}

/** Asks the holder for a label edit or a chat's change (it waits the default: a sync of the collection, then the patch). */
export function askLabels(
  deps: Pick<LabelDeps, 'holder'>,
  deviceId: string,
  command: Unaddressed<LabelCommand>,
): Promise<HolderOutcome<LabelCommandResult>> {
  return askHolder<LabelCommandResult>(deps.holder, deviceId, command);
}

/** The label as the device knows it (from the label store), or why there is none. */
export async function knownLabel(
  deps: Pick<LabelDeps, 'sessions' | 'store'>,
  deviceId: string,
  labelId: string,
): Promise<{ ok: true; label: LabelListed } | NotLinked | UnknownLabel> {
  if (!(await linked(deps, deviceId))) return { ok: false, reason: 'not_linked' };
  const label = await deps.store.get(deviceId, labelId);
  return label ? { ok: true, label } : { ok: false, reason: 'unknown_label' };
}

/**
 * A label edit found possible, and the edit itself: `apply` asks the holder. The two are apart so
 * that the caller runs `apply` within its at-most-once handling (the request's Idempotency-Key)
 * while the lookup's refusals come before it: a retried delete of a label gone since is 404.
 */
export type LabelEdit =
  { ok: true; apply: () => Promise<HolderOutcome<LabelCommandResult>> } | NotLinked | UnknownLabel;
