import type { LabelListed } from '@mgw/contracts';
import { linked, type LabelDeps, type NotLinked } from './device-labels.js';

/** GET /chats/:chatId/labels: the labels the chat has. */
export async function listChatLabels(
  deps: Pick<LabelDeps, 'sessions' | 'store'>,
  deviceId: string,
  chatId: string,
): Promise<{ ok: true; data: { chatId: string; labels: Omit<LabelListed, 'chats'>[] } } | NotLinked> {
  if (!(await linked(deps, deviceId))) return { ok: false, reason: 'not_linked' };
  return { ok: true, data: { chatId, labels: await deps.store.ofChat(deviceId, chatId) } };
}
