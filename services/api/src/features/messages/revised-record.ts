import type { MessageRevisions } from '@mgw/store';

/**
 * A record as GET /messages/:id shows it, with what edits and deletes changed (issue 29): an
 * edited text's `edits` (oldest first) and its current `text`; an inbound message its contact
 * deleted reads `status: "deleted"` with `deletedAt` (its text is gone).
 */
export async function withRevisions<T extends { messageId: string; status: string }>(
  s: { revisions: Pick<MessageRevisions, 'view'> },
  deviceId: string,
  record: T,
  /** The record's fields as already read (`MessageStore.fields`): not read again. */
  fields?: Record<string, string>,
): Promise<T> {
  const view = await s.revisions.view(deviceId, record.messageId, fields);
  if (view.deletedAt) return { ...record, status: 'deleted', deletedAt: view.deletedAt, text: undefined };
  return view.edits ? { ...record, edits: view.edits, text: view.text } : record;
}
