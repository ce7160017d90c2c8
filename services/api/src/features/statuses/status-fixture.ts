import type { StatusStore, StoredStatus } from '@mgw/store';
import { MemoryAcceptor, MemoryMessages, MemoryRedis } from '../test-support.js';
import { postStatus } from './post-status.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): statuses without an API, for their
 * fast tests (`<use-case>.test.ts` beside each) — posted through the send pipeline (in memory: the
 * acceptor, the records it leaves, marked sent as the sender marks them), their records in an
 * in-memory status store.
 */

/** The device's status records in memory: their audiences, due times and views (StatusStore's). */
export class MemoryStatuses implements Pick<StatusStore, 'create' | 'forget' | 'has' | 'audience' | 'list'> {
  readonly records = new Map<string, StoredStatus & { deviceId: string; audience?: string[] }>();
  async create(
    deviceId: string,
    messageId: string,
    audience: string[],
    dueAt: number,
    kind: StoredStatus['kind'],
  ) {
    this.records.set(messageId, {
      deviceId,
      messageId,
      dueAt,
      kind,
      audienceSize: audience.length,
      audience,
      viewers: [],
    });
  }
  async forget(_deviceId: string, messageId: string) {
    this.records.delete(messageId);
  }
  async has(deviceId: string, messageId: string) {
    return this.records.get(messageId)?.deviceId === deviceId;
  }
  async audience(deviceId: string, messageId: string) {
    const r = this.records.get(messageId);
    return r?.deviceId === deviceId ? r.audience : undefined;
  }
  async list(deviceId: string, sinceMs: number): Promise<StoredStatus[]> {
    return [...this.records.values()]
      .filter((r) => r.deviceId === deviceId && r.dueAt >= sinceMs)
      .sort((a, b) => b.dueAt - a.dueAt)
      .map(({ deviceId: _d, audience: _a, ...stored }) => stored);
  }
}

export const deviceId = 'st-1';
/** A status's audience, as phones and as the JIDs the status names. */
export const viewers = ['15554000001', '15554000002'];
export const jids = viewers.map((p) => `${p}@s.whatsapp.net`);

export function statusFixture() {
  const redis = new MemoryRedis();
  const messages = new MemoryMessages();
  const acceptor = new MemoryAcceptor(messages);
  const statuses = new MemoryStatuses();
  const deps = { acceptor, redis: redis.client, statuses, messages };

  /** A status posted now: its message id. */
  async function post(body: Parameters<typeof postStatus>[2]): Promise<string> {
    const accepted = await postStatus(deps, deviceId, body);
    if (accepted.kind !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(accepted)}`);
    return accepted.messageId;
  }
  /** A status posted now and marked sent `agoMs` ago. */
  async function sentStatus(agoMs: number): Promise<string> {
    const id = await post({ text: 'Open today', audience: viewers });
    messages.sent(deviceId, id, new Date(Date.now() - agoMs));
    return id;
  }
  return { redis, messages, acceptor, statuses, deps, post, sentStatus };
}
export type StatusFixture = ReturnType<typeof statusFixture>;
