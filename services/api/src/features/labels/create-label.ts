import { randomInt } from 'node:crypto';
import type { LabelCommandResult, LabelCreateBody } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askLabels, type LabelDeps } from './device-labels.js';

/** A new label of the account; its id is the gateway's choice (digits, as WhatsApp's are). */
export function createLabel(
  deps: Pick<LabelDeps, 'holder'>,
  deviceId: string,
  body: LabelCreateBody,
): Promise<HolderOutcome<LabelCommandResult>> {
  const label = {
    id: String(randomInt(100_000, 2_000_000_000)),
    name: body.name,
    color: body.color,
    deleted: false,
  };
  return askLabels(deps, deviceId, { type: 'app-state-label', label });
}
