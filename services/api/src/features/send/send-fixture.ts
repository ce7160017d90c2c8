import { keys } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import { MemoryAcceptor, MemoryMessages } from './memory-send.js';
import type { ReviseDeps } from './revise-message.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): edits, deletes and reactions name one
 * of the device's messages — for their fast tests (`<use-case>.test.ts` beside each), without an
 * API: the records in memory, the device's phone <-> LID map in an in-memory Redis (as the sender
 * keeps it).
 */
export const deviceId = 'rv-1';
/** The LID of the device's contact 15550001111. */
export const lid = '998877665544@lid';

export function reviseFixture() {
  const messages = new MemoryMessages();
  const acceptor = new MemoryAcceptor(messages);
  const redis = new MemoryRedis();
  redis.hash(keys.contactIdentities(deviceId), {
    'p:15550001111': '998877665544',
    'l:998877665544': '15550001111',
  });
  const deps: ReviseDeps = { acceptor, messages, redis: redis.client };

  /** A message of the device to `to`, sent `agoMs` ago (or still queued). */
  async function message(to: string, agoMs?: number): Promise<string> {
    const accepted = (await acceptor.accept({
      deviceId,
      kind: 'send',
      recipients: [to],
      content: { text: 'first' },
      priority: 0,
    })) as {
      jobs: { messageId: string }[];
    };
    const id = accepted.jobs[0]!.messageId;
    if (agoMs !== undefined) messages.sent(deviceId, id, new Date(Date.now() - agoMs));
    acceptor.requests.length = 0;
    return id;
  }
  return { messages, acceptor, redis, deps, message };
}
export type ReviseFixture = ReturnType<typeof reviseFixture>;
