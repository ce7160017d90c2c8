import { GraphError, graphVerdict, type StatusEvent, type WebhookError } from '@mgw/cloud';
import { FAILURE_REASONS, type FailureReason, type Metrics } from '@mgw/contracts';
import type { MessageStore } from '@mgw/store';

/** What a status does to the records: moves one, finds it already there, or finds none of ours. */
export type StatusOutcome = 'applied' | 'unchanged' | 'unknown_message';

export interface StatusDeps {
  messages: Pick<
    MessageStore,
    'fields' | 'job' | 'findByPlatformId' | 'markSent' | 'markReceipt' | 'markFailed' | 'markFailedAfterSent'
  >;
  metrics: Pick<Metrics, 'messages'>;
}

/** Our message ids (`newMessageId`: a UUID); anything else in the callback data names none of ours. */
const MESSAGE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The reason a failed status gives the record: its first error's code read as a send's would be
 * (graphVerdict: 131047 window closed, 131026 undeliverable, …); a failure Meta gave no code for
 * is `undeliverable`.
 */
export function failureReasonOf(errors: WebhookError[] | undefined): FailureReason {
  const first = errors?.[0];
  if (!first) return FAILURE_REASONS.undeliverable;
  return graphVerdict(new GraphError(400, first.code, first.title, undefined, first.details)).reason;
}

/**
 * Moves the record a status of the device's number names, as the linked engine's receipts do
 * (the store's own transitions, so `message.sent/delivered/read/failed` fire identically): found by
 * its callback data (our messageId, which every cloud send carries) else by its wamid. Only this
 * device's records are looked at: a status naming another device's message finds nothing. Nothing
 * moves back (a delivered message never fails, a failed one never moves).
 */
export async function applyStatus(
  deps: StatusDeps,
  deviceId: string,
  event: StatusEvent,
): Promise<StatusOutcome> {
  const { messages } = deps;
  const found = await recordOf(deps, deviceId, event);
  if (!found) return 'unknown_message';
  const { messageId, record } = found;
  const at = new Date(event.timestampMs);
  let moved: boolean;
  switch (event.status) {
    case 'sent': {
      if (record.sentAt) return 'unchanged';
      // The engine's answer with the wamid was lost: the webhook says it went, and under which id.
      const job = await messages.job(deviceId, messageId);
      moved = job ? await messages.markSent(job, at, undefined, event.wamid) : false;
      break;
    }
    case 'delivered':
    case 'read':
      moved = await messages.markReceipt(deviceId, messageId, event.status, at);
      break;
    case 'failed': {
      const reason = failureReasonOf(event.errors);
      const job =
        record.status === undefined || record.status === 'queued'
          ? await messages.job(deviceId, messageId)
          : undefined;
      // Still queued (its send's answer lost): failed and settled as the sender would; else after sent.
      moved = job
        ? await messages.markFailed(job, reason, at)
        : await messages.markFailedAfterSent(deviceId, messageId, reason, at);
      break;
    }
  }
  if (!moved) return 'unchanged';
  deps.metrics.messages.inc({ status: event.status });
  return 'applied';
}

/** The device's outbound message the status names, and its record, if it is one. */
async function recordOf(
  deps: StatusDeps,
  deviceId: string,
  event: StatusEvent,
): Promise<{ messageId: string; record: Record<string, string> } | undefined> {
  const ours = async (messageId: string) => {
    const record = await deps.messages.fields(deviceId, messageId);
    return record.messageId === messageId && record.direction !== 'inbound'
      ? { messageId, record }
      : undefined;
  };
  if (event.callbackData && MESSAGE_ID.test(event.callbackData)) {
    const found = await ours(event.callbackData);
    if (found) return found;
  }
  const byWamid = await deps.messages.findByPlatformId(deviceId, event.wamid);
  return byWamid ? ours(byWamid) : undefined;
}
