import { Joi } from './text.js';
import { EVENT_TYPES, type EventType } from './events.js';

/**
 * GET /events query (the event log, see docs/events.md "The event log and GET /events"); apart
 * from schemas.ts, which holds the other bodies and queries.
 */

/** An event log cursor: a Redis stream entry id, `<ms>-<seq>` (both fit 64 bits at these lengths). */
export const EVENT_CURSOR_PATTERN = /^\d{1,15}-\d{1,19}$/;
/** Most events one GET /events page holds. */
export const EVENTS_PAGE_MAX = 1000;

/** One of EVENT_TYPES, as a regular expression alternative (the dots escaped). */
const EVENT_TYPE_ALTERNATIVES = EVENT_TYPES.map((e) => e.replace(/\./g, '\\.')).join('|');
/** A comma-separated list of event types (GET /events `types`). */
export const EVENT_TYPE_LIST_PATTERN = new RegExp(
  `^(${EVENT_TYPE_ALTERNATIVES})(,(${EVENT_TYPE_ALTERNATIVES}))*$`,
);

export interface EventsQuery {
  token?: string;
  after?: string;
  /** Comma-separated event types: see {@link eventTypeList}. */
  types?: string;
  limit: number;
}

/**
 * GET /events query: the cursor of the last event seen (`after`, a previous answer's `nextCursor`
 * or an event's `cursor`), a comma-separated list of event types, and a page size (1–1000,
 * default 100).
 */
export const eventsQuerySchema = Joi.object<EventsQuery>({
  token: Joi.string(),
  after: Joi.string()
    .max(40)
    .pattern(EVENT_CURSOR_PATTERN)
    .messages({ 'string.pattern.base': '"after" must be the cursor of an event or a nextCursor' }),
  types: Joi.string()
    .max(1000)
    .pattern(EVENT_TYPE_LIST_PATTERN)
    .messages({
      'string.pattern.base': `"types" must be a comma-separated list of event types (${EVENT_TYPES.join(', ')})`,
    }),
  limit: Joi.number().integer().min(1).max(EVENTS_PAGE_MAX).default(100),
});

/** The event types of a valid `types` value, each once. */
export function eventTypeList(types: string): EventType[] {
  return [...new Set(types.split(','))] as EventType[];
}

/**
 * GET /events/stream query (Server-Sent Events of the log, docs/events.md "Streaming: SSE"): where
 * to resume (`after`, for clients that cannot send the `Last-Event-ID` header) and which types.
 */
export const eventStreamQuerySchema = Joi.object<Omit<EventsQuery, 'limit'>>({
  token: Joi.string(),
  after: eventsQuerySchema.extract('after'),
  types: eventsQuerySchema.extract('types'),
});
