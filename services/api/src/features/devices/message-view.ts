import type { RedisClient } from '@mgw/common';
import { keys, type MessageRecord, isGroupAddress } from '@mgw/contracts';
import type {
  ContentStore,
  MessageKindStore,
  MessageRevisions,
  MessageStore,
  ShownContent,
} from '@mgw/store';
import { withContacts, withRevisions } from '../messages/index.js';

/**
 * How much of an outbound text or caption an admin view carries (`textTruncated: true` past it): a
 * table cell shows 80 characters and the rest on hover, so a 4,096-character text need not travel
 * whole with each of a page's 100 messages every few seconds.
 */
export const SHOWN_TEXT_CHARS = 1000;

export interface MessageViewDeps {
  redis: RedisClient;
  revisions: MessageRevisions;
  kinds: MessageKindStore;
  /** The content an outbound message was sent from (its record's `contentId`). */
  messages: MessageStore;
  /** What a sent text or attachment said (ContentStore.shown: sealed, one copy per request). */
  contents: ContentStore;
}

/**
 * Records as the dashboard's Messages page shows them: with edits and deletes (as GET
 * /messages/:id), the kind fields kept on them (a reaction, a location, cards, a poll, the
 * `mentions` of a text), `contact` (both identities the device's phone <-> LID map knows; one round
 * trip for the page) and, for a message to a group, `chat: { type: "group", id }` (the subject is
 * the sender's group cache's, not the API's: the page shows the id). An outbound text or
 * attachment also shows what it said (`text`, the attachment's kind, name and `caption`), read from
 * its request's content, and an edit or a delete what it changes (`revises`: the target's id, the
 * action, an edit's text) — the admin API only: the public GET /messages/:id keeps the spec's shape.
 */
export async function messageViews(
  d: MessageViewDeps,
  deviceId: string,
  records: MessageRecord[],
  /** Each record's fields as already read (`MessageStore.fields`), by message id: not read again. */
  fields?: ReadonlyMap<string, Record<string, string>>,
  /** What sent messages said, already read (`ContentStore.shownFrom`), by message id. */
  shownById?: ReadonlyMap<string, ShownContent | undefined>,
): Promise<Record<string, unknown>[]> {
  const views = await Promise.all(
    records.map(async (r) => {
      // Read once for the revisions, the kinds and `revises` (each would read it otherwise).
      const h = fields?.get(r.messageId) ?? (await d.redis.hgetall(keys.message(deviceId, r.messageId)));
      const [revised, kinds, shown] = await Promise.all([
        withRevisions(d, deviceId, r, h),
        d.kinds.read(deviceId, r.messageId, h),
        r.direction === 'inbound'
          ? undefined
          : shownById?.has(r.messageId)
            ? shownById.get(r.messageId)
            : shownContent(d, deviceId, r.messageId, h),
      ]);
      const view: Record<string, unknown> = { ...revised, ...kinds };
      const revises = d.kinds.revisionOf(deviceId, r.messageId, h);
      if (revises) view.revises = revises;
      if (shown && view.status !== 'deleted') withShown(view, shown);
      truncateTexts(view);
      if (typeof r.to === 'string' && isGroupAddress(r.to) && !view.chat)
        view.chat = { type: 'group', id: r.to };
      return view;
    }),
  );
  // An outbound group message has no contact (an inbound one's is its author, kept on it).
  const people = views.filter((v) => !v.chat || v.contact);
  await withContacts(d.redis, deviceId, people);
  return views;
}

async function shownContent(
  d: MessageViewDeps,
  deviceId: string,
  messageId: string,
  record?: Record<string, string>,
): Promise<ShownContent | undefined> {
  const contentId = await d.messages.contentIdOf(deviceId, messageId, record);
  return contentId ? d.contents.shown(deviceId, contentId, messageId) : undefined;
}

/** The view's text (an edit's current text wins: it is what the chat shows now) and attachment. */
function withShown(view: Record<string, unknown>, shown: ShownContent): void {
  if (view.text === undefined && shown.text !== undefined) view.text = shown.text;
  if (shown.attachment) view.attachment = shown.attachment;
}

/** A text or caption longer than SHOWN_TEXT_CHARS is cut there, and the view says so. */
function truncateTexts(view: Record<string, unknown>): void {
  const cut = (text: unknown): unknown => {
    if (typeof text !== 'string' || text.length <= SHOWN_TEXT_CHARS) return text;
    view.textTruncated = true;
    return text.slice(0, SHOWN_TEXT_CHARS);
  };
  if (view.text !== undefined) view.text = cut(view.text);
  const att = view.attachment as { caption?: string } | undefined;
  if (att?.caption !== undefined) view.attachment = { ...att, caption: cut(att.caption) };
}
