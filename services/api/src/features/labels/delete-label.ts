import { askLabels, knownLabel, type LabelDeps, type LabelEdit } from './device-labels.js';

/** DELETE /labels/:labelId: deleted for the account (its chats lose it), a label edit with `deleted`. */
export async function deleteLabel(deps: LabelDeps, deviceId: string, labelId: string): Promise<LabelEdit> {
  const known = await knownLabel(deps, deviceId, labelId);
  if (!known.ok) return known;
  const { name, color } = known.label;
  const label = { id: labelId, name, color, deleted: true };
  return { ok: true, apply: () => askLabels(deps, deviceId, { type: 'app-state-label', label }) };
}
