import { expect } from 'chai';
import { ERRORS, KIND_ERRORS } from '@mgw/contracts';
import { refused, type Refusal } from '../../src/enqueue/refusal.js';
import { refusalError } from '../../src/http/refusal-error.js';

describe('refusals in HTTP (refusalError)', () => {
  it('When a use case refuses, then each reason is its status and the contract error, with its fields', () => {
    const answers: [Refusal, number, Record<string, unknown>][] = [
      [refused('no_device'), 409, { success: false, error: ERRORS.noDevice }],
      [refused('attachment_too_large'), 413, { success: false, error: ERRORS.attachmentTooLarge }],
      [refused('gave_up'), 503, { success: false, error: ERRORS.serviceUnavailable }],
      [refused('revision_target_not_found'), 404, { success: false, error: ERRORS.revisionTargetNotFound }],
      [refused('not_editable'), 409, { success: false, error: ERRORS.notEditable }],
      [refused('not_deletable'), 409, { success: false, error: ERRORS.notDeletable }],
      [refused('edit_window_passed'), 409, { success: false, error: ERRORS.editWindowPassed }],
      [refused('delete_window_passed'), 409, { success: false, error: ERRORS.deleteWindowPassed }],
      [refused('reaction_target_failed'), 409, { success: false, error: KIND_ERRORS.reactionTargetFailed }],
      [
        refused('reaction_target_not_found'),
        404,
        {
          success: false,
          error: KIND_ERRORS.reactionTargetNotFound,
          details: [
            { path: ['reaction', 'messageId'], message: 'reaction.messageId is no message of this device' },
          ],
        },
      ],
      [
        { kind: 'refused', reason: 'invalid', details: [{ path: ['to'], message: 'to must be …' }] },
        400,
        {
          success: false,
          error: ERRORS.invalidRequest,
          details: [{ path: ['to'], message: 'to must be …' }],
        },
      ],
      [
        {
          kind: 'refused',
          reason: 'queue_full',
          queued: { messages: 3, bytes: 30 },
          limit: { messages: 4, bytes: 40 },
        },
        429,
        {
          success: false,
          error: ERRORS.deviceQueueFull,
          queued: { messages: 3, bytes: 30 },
          limit: { messages: 4, bytes: 40 },
        },
      ],
      [
        { kind: 'refused', reason: 'rate_limited', retryAfterMs: 1200 },
        429,
        { success: false, error: ERRORS.rateLimited, resetIn: 2 },
      ],
      [
        { kind: 'refused', reason: 'rate_limited', retryAfterMs: -5 },
        429,
        { success: false, error: ERRORS.rateLimited, resetIn: 1 },
      ],
    ];
    for (const [refusal, status, body] of answers) {
      const e = refusalError(refusal);
      expect(e.status, refusal.reason).to.equal(status);
      // The same bytes as before: key order included.
      expect(JSON.stringify(e.body()), refusal.reason).to.equal(JSON.stringify(body));
    }
  });
});
