import type { RedisClient } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import {
  optIn,
  optOut,
  readOptOutSettings,
  writeOptOutSettings,
  type OptOutSettingsChange,
} from '@mgw/store';

export interface OptOutDeps {
  redis: RedisClient;
  metrics: Metrics;
}

/** A contact's place on the suppression list after an operator's change, and whether it moved. */
export interface OptOutChange {
  phone: string;
  optedOut: boolean;
  changed: boolean;
}

/**
 * Suppresses a contact by its number or its LID (as if it wrote STOP; no confirmation). Either
 * identity covers both when the device knows the pair.
 */
export async function addOptOut(d: OptOutDeps, deviceId: string, phone: string): Promise<OptOutChange> {
  const added = await optOut(d.redis, deviceId, phone, 'admin');
  if (added) d.metrics.optOutChanges.inc({ direction: 'opted_out', source: 'admin' });
  return { phone, optedOut: true, changed: added };
}

/** Takes a contact off the list, by either identity (idempotent). */
export async function removeOptOut(d: OptOutDeps, deviceId: string, phone: string): Promise<OptOutChange> {
  const removed = await optIn(d.redis, deviceId, phone, 'admin');
  if (removed) d.metrics.optOutChanges.inc({ direction: 'opted_in', source: 'admin' });
  return { phone, optedOut: false, changed: removed };
}

/**
 * Changes some of the device's opt-out settings (null: back to the default): the settings in force
 * after it, or — nothing changed — the opt-in keywords that are also opt-out keywords.
 */
export async function changeOptOutSettings(
  d: OptOutDeps,
  deviceId: string,
  change: OptOutSettingsChange,
): Promise<
  | { kind: 'changed'; settings: Awaited<ReturnType<typeof readOptOutSettings>> }
  | { kind: 'refused'; reason: 'keyword_clash'; keywords: string[] }
> {
  const clashes = await writeOptOutSettings(d.redis, deviceId, change);
  if (clashes.length) return { kind: 'refused', reason: 'keyword_clash', keywords: clashes };
  return { kind: 'changed', settings: await readOptOutSettings(d.redis, deviceId) };
}
