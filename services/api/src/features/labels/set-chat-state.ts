import type { ChatStateBody, LabelCommandResult } from '@mgw/contracts';
import type { HolderOutcome } from '../holder/index.js';
import { askLabels, type LabelDeps } from './device-labels.js';

/** PATCH /chats/:chatId: the chat archived, pinned or muted (or not) on the account's devices. */
export function setChatState(
  deps: Pick<LabelDeps, 'holder'>,
  deviceId: string,
  chat: string,
  state: ChatStateBody,
): Promise<HolderOutcome<LabelCommandResult>> {
  return askLabels(deps, deviceId, { type: 'app-state-chat', chat, state });
}
