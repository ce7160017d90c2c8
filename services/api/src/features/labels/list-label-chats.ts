import type { LabelChatsQuery } from '@mgw/contracts';
import { linked, type LabelDeps, type NotLinked, type UnknownLabel } from './device-labels.js';

/** A page of a label's chats: `next` is the `after` of the next page (null on the last). */
export interface LabelChatsPage {
  labelId: string;
  chats: string[];
  next: string | null;
}

/** GET /labels/:labelId/chats: the chats the label is on, a page after `after`. */
export async function listLabelChats(
  deps: Pick<LabelDeps, 'sessions' | 'store'>,
  deviceId: string,
  labelId: string,
  page: LabelChatsQuery,
): Promise<{ ok: true; data: LabelChatsPage } | NotLinked | UnknownLabel> {
  if (!(await linked(deps, deviceId))) return { ok: false, reason: 'not_linked' };
  const found = await deps.store.chats(deviceId, labelId, page);
  if (!found) return { ok: false, reason: 'unknown_label' };
  return { ok: true, data: { labelId, ...found } };
}
