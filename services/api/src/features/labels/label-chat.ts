import type { LabelCommandResult } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askLabels, type LabelDeps } from './device-labels.js';

/** Which label a chat gets or loses. */
export interface ChatLabel {
  chat: string;
  labelId: string;
  /** true: the chat gets the label (POST); false: it loses it (DELETE). */
  labeled: boolean;
}

/**
 * POST /chats/:chatId/labels and DELETE /chats/:chatId/labels/:labelId: the chat gets or loses the
 * label on the account's devices; the answer names the label and which it was.
 */
export async function labelChat(
  deps: Pick<LabelDeps, 'holder'>,
  deviceId: string,
  { chat, labelId, labeled }: ChatLabel,
): Promise<HolderOutcome<LabelCommandResult & { labelId: string; labeled: boolean }>> {
  const asked = await askLabels(deps, deviceId, { type: 'app-state-chat-label', chat, labelId, labeled });
  return asked.ok ? { ok: true, data: { ...asked.data, labelId, labeled } } : asked;
}
