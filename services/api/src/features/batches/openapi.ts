/** A device's lists (batches) and their control in the OpenAPI document. */
import { ERRORS, batchesQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { withPathParam, type OperationSpec } from '../../openapi/operation.js';

export function batchPaths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema) {
  const r = config.rateLimits;
  const control = (summary: string, description: string) =>
    withPathParam(
      operation({
        tag: 'Messages',
        summary,
        description,
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'BatchResult', description: 'The list after the change.' },
        errors: [404, 409, 413],
      }),
      'batchId',
    );
  return {
    '/batches': {
      get: operation({
        tag: 'Messages',
        summary: "The device's lists, newest first",
        description:
          'A page of lists (each as GET /batches/{batchId} answers it), newest first; pass `nextCursor` as `cursor` for the next page. Lists are kept as long as message records (MESSAGE_RETENTION_SECONDS).',
        rateLimit: r.messages,
        query: batchesQuerySchema,
        success: { status: 200, schema: 'BatchPage', description: 'A page.' },
        errors: [],
      }),
    },
    '/batches/{batchId}': {
      get: withPathParam(
        operation({
          tag: 'Messages',
          summary: "A list's progress",
          description:
            'The state of a list (the `messageId` /send answered for it) and counts of its messages by status; they always sum to `total`, and `counts.held` (how many queued ones are held now) is a subset of `queued`. `completedAt` is set once no message is queued.',
          rateLimit: r.messages,
          query: emptyQuerySchema,
          success: { status: 200, schema: 'BatchResult', description: 'The counts.' },
          errors: [404],
        }),
        'batchId',
      ),
    },
    '/batches/{batchId}/pause': {
      post: control(
        'Pause a list',
        'Nothing more of the list is sent until it is resumed: its queued messages wait (`held.reason` `batch_paused`). A message whose send already started (handed to the socket) may still go. **Choice:** pausing a paused list is a 200 that changes nothing; a completed list answers 409 `' +
          ERRORS.batchCompleted +
          '` and a cancelled one 409 `' +
          ERRORS.batchCancelled +
          '`. Emits `batch.paused`.',
      ),
    },
    '/batches/{batchId}/resume': {
      post: control(
        'Resume a paused list',
        'Its held messages go back to the queue at once and are sent as before (caps, pacing and quiet hours still apply). **Choice:** resuming an active list is a 200 that changes nothing; a completed list answers 409 `' +
          ERRORS.batchCompleted +
          '` and a cancelled one 409 `' +
          ERRORS.batchCancelled +
          '`. Emits `batch.resumed`.',
      ),
    },
    '/batches/{batchId}/cancel': {
      post: control(
        'Cancel a list',
        'Every message of the list not yet sent ends `failed` with `error: "cancelled"`: once this answers, none of them reaches a contact (also after a sender failover). A message whose send had already started when the cancel arrived may still be sent (its record then reads `sent`). **Choice:** cancelling a cancelled list is a 200 (it finishes a cancel cut short); a completed list answers 409 `' +
          ERRORS.batchCompleted +
          '`. Emits `batch.cancelled`.',
      ),
    },
  };
}
