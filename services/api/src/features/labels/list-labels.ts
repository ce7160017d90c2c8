import type { LabelListed } from '@mgw/contracts';
import { linked, type LabelDeps, type NotLinked } from './device-labels.js';

/** GET /labels: the device's labels, each with its count of chats. */
export async function listLabels(
  deps: Pick<LabelDeps, 'sessions' | 'store'>,
  deviceId: string,
): Promise<{ ok: true; data: { total: number; labels: LabelListed[] } } | NotLinked> {
  if (!(await linked(deps, deviceId))) return { ok: false, reason: 'not_linked' };
  const labels = await deps.store.list(deviceId);
  return { ok: true, data: { total: labels.length, labels } };
}
