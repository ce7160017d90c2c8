import type { RedisClient } from '@mgw/common';
import type { MessageRecord } from '@mgw/contracts';
import type { MessageKindStore, MessageRevisions } from '@mgw/store';
import { withContacts } from '../read/contacts.js';
import { withRevisions } from '../read/revised-record.js';

export interface MessageViewDeps {
  redis: RedisClient;
  revisions: MessageRevisions;
  kinds: MessageKindStore;
}

/**
 * Records as the dashboard's Messages page shows them: with edits and deletes (as GET
 * /messages/:id), the kind fields kept on them (a reaction, a location, cards, a poll, the
 * `mentions` of a text), `contact` (both identities the device's phone <-> LID map knows; one round
 * trip for the page) and, for a message to a group, `chat: { type: "group", id }` (the subject is
 * the sender's group cache's, not the API's: the page shows the id).
 */
export async function messageViews(
  d: MessageViewDeps,
  deviceId: string,
  records: MessageRecord[],
): Promise<Record<string, unknown>[]> {
  const views = await Promise.all(
    records.map(async (r) => {
      const [revised, kinds] = await Promise.all([
        withRevisions(d, deviceId, r),
        d.kinds.read(deviceId, r.messageId),
      ]);
      const view: Record<string, unknown> = { ...revised, ...kinds };
      if (typeof r.to === 'string' && r.to.endsWith('@g.us') && !view.chat)
        view.chat = { type: 'group', id: r.to };
      return view;
    }),
  );
  // An outbound group message has no contact (an inbound one's is its author, kept on it).
  const people = views.filter((v) => !v.chat || v.contact);
  await withContacts(d.redis, deviceId, people);
  return views;
}
