import { contextOf, recordSpan, tracer, tracingOn } from '@mgw/common';
import { eventTraceparent, type LoggedEvent } from '@mgw/store';

const api = tracer('api');

/**
 * Each event of a message written to a stream (SSE, WebSocket) or a pull page: a span in the
 * message's trace (`event.<transport>`), when the event carries one and tracing is on.
 */
export function traceStreamed(deviceId: string, events: readonly LoggedEvent[], transport: string): void {
  if (!tracingOn()) return;
  const now = Date.now();
  for (const e of events) {
    const tp = eventTraceparent(e);
    if (!tp) continue;
    recordSpan(api, `event.${transport}`, {
      parent: contextOf(tp),
      startTime: now,
      endTime: now,
      attributes: { 'mgw.device': deviceId, 'mgw.event.type': e.type, 'mgw.event.id': e.id },
    });
  }
}
