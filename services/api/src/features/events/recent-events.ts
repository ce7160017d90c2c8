import { Joi, eventTypeList, eventsQuerySchema } from '@mgw/contracts';
import type { EventLog, LoggedEvent } from '@mgw/store';

/** A page of the operator's view: small, the rows are expandable. */
export const RECENT_EVENTS_MAX = 100;

export interface RecentEventsQuery {
  before?: string;
  types?: string;
  limit: number;
}

export const recentEventsQuerySchema = Joi.object<RecentEventsQuery>({
  before: eventsQuerySchema
    .extract('after')
    .messages({ 'string.pattern.base': '"before" must be the cursor of an event or an olderCursor' }),
  types: eventsQuerySchema.extract('types'),
  limit: Joi.number().integer().min(1).max(RECENT_EVENTS_MAX).default(25),
});

/**
 * The device's event log (the log GET /events reads, with the same retention, trimmed first as
 * GET /events does) newest first, for the dashboard's Events tab: `before` pages to older events
 * (an answer's `olderCursor`, null once the window's oldest was reached), `types` filters as
 * GET /events does.
 */
export async function recentEvents(
  eventLog: EventLog,
  deviceId: string,
  q: RecentEventsQuery,
): Promise<{ events: LoggedEvent[]; olderCursor: string | null }> {
  await eventLog.trim([deviceId]);
  return eventLog.readBack(deviceId, {
    limit: q.limit,
    ...(q.before ? { before: q.before } : {}),
    ...(q.types ? { types: eventTypeList(q.types) } : {}),
  });
}
