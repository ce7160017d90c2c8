import type { LabelUpdateBody } from '@mgw/contracts';
import { askLabels, knownLabel, type LabelDeps, type LabelEdit } from './device-labels.js';

/**
 * PATCH /labels/:labelId: renamed and/or recoloured — the same label edit a create makes, with
 * the label's id and what the body does not change kept as the device knows it.
 */
export async function updateLabel(
  deps: LabelDeps,
  deviceId: string,
  labelId: string,
  change: LabelUpdateBody,
): Promise<LabelEdit> {
  const known = await knownLabel(deps, deviceId, labelId);
  if (!known.ok) return known;
  const label = {
    id: labelId,
    name: change.name ?? known.label.name,
    color: change.color ?? known.label.color,
    deleted: false,
  };
  return { ok: true, apply: () => askLabels(deps, deviceId, { type: 'app-state-label', label }) };
}
