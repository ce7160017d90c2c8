import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { NCT_SALT_TYPE } from '@mgw/messenger';
import { waitFor } from './net.js';

/** What `deliverNctSalt` needs of a stack (a `Stack` has it). */
export interface NctSaltStack {
  readonly redis: RedisClient;
  readonly deviceId: string;
  simApi<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/**
 * The account's phone sends its first history sync since the device linked (no chats): it carries
 * the account's NCT salt (HistorySync field 19, libs/messenger-sim first-contacts.ts), which the
 * device keeps to give first contacts a cstoken (libs/messenger first-contact.ts). Resolves once
 * the device holds it (sealed, in its auth keys). `form`: the chunk inline or by download (else
 * the simulator's forms decide, libs/messenger-sim forms.ts).
 */
export async function deliverNctSalt(
  stack: NctSaltStack,
  phone: string,
  deviceId = stack.deviceId,
  form?: 'inline' | 'download',
): Promise<void> {
  await stack.simApi('POST', `/accounts/${phone}/history-sync`, {
    conversations: [],
    ...(form ? { form } : {}),
  });
  await waitFor(
    async () => (await stack.redis.hexists(keys.authKeys(deviceId, NCT_SALT_TYPE), 'salt')) === 1,
    {
      what: 'the device keeps the NCT salt',
    },
  );
}
