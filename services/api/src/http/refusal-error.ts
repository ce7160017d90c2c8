import {
  ACCOUNT_ERRORS,
  ERRORS,
  FAILURE_REASONS,
  KIND_ERRORS,
  TEMPLATE_ERRORS,
  USERNAME_ERRORS,
} from '@mgw/contracts';
import type { QuotaName } from '@mgw/store';
import type { Refusal } from '../enqueue/refusal.js';
import { ApiError } from './api-error.js';

/**
 * 429 for a workspace quota reached (docs/workspaces.md "Quotas"): `details` is one problem naming
 * the quota, its limit and when it resets (`null` when it frees as things end, not at a time).
 * `tokens` and `users` are the install's ceilings on a workspace's tokens and console users
 * (WORKSPACE_MAX_TOKENS, WORKSPACE_MAX_CONSOLE_USERS), not an operator's quota.
 */
export function workspaceQuotaError(
  quota: QuotaName | 'tokens' | 'users',
  limit: number,
  resetsAt: string | null = null,
): ApiError {
  return new ApiError(429, ERRORS.workspaceQuota, [
    {
      path: ['quotas', quota],
      message: `The workspace's ${quota} quota (${limit}) is reached`,
      quota,
      limit,
      resetsAt,
    },
  ]);
}

/**
 * A refused request in HTTP: the contract's status, error string and details for each reason
 * (messaging-gateway-api.md). Thrown by the routes inside their idempotent work, so a refused
 * request frees its Idempotency-Key and its /send hit is counted as any failure's (send-rate-limit.ts).
 */
export function refusalError(refusal: Refusal): ApiError {
  switch (refusal.reason) {
    case 'invalid':
      return ApiError.invalid(refusal.details);
    case 'attachment_too_large':
      return new ApiError(413, ERRORS.attachmentTooLarge);
    case 'no_device':
      return new ApiError(409, ERRORS.noDevice);
    case 'queue_full':
      return new ApiError(429, ERRORS.deviceQueueFull, undefined, {
        queued: refusal.queued,
        limit: refusal.limit,
      });
    case 'rate_limited':
      return new ApiError(429, ERRORS.rateLimited, undefined, {
        resetIn: Math.max(1, Math.ceil(refusal.retryAfterMs / 1000)),
      });
    case 'gave_up':
      return new ApiError(503, ERRORS.serviceUnavailable);
    case 'media_not_found':
      return new ApiError(404, ERRORS.mediaObjectNotFound, [
        { path: ['attachment', 'mediaId'], message: 'attachment.mediaId is no media of this device' },
      ]);
    case 'media_through_pool':
      return ApiError.invalid([
        {
          path: ['attachment', 'mediaId'],
          message: 'attachment.mediaId cannot be sent through a pool: use url or base64',
        },
      ]);
    case 'reaction_target_not_found':
      return new ApiError(404, KIND_ERRORS.reactionTargetNotFound, [
        { path: ['reaction', 'messageId'], message: 'reaction.messageId is no message of this device' },
      ]);
    case 'reaction_target_failed':
      return new ApiError(409, KIND_ERRORS.reactionTargetFailed);
    case 'revision_target_not_found':
      return new ApiError(404, ERRORS.revisionTargetNotFound);
    case 'not_editable':
      return new ApiError(409, ERRORS.notEditable);
    case 'not_deletable':
      return new ApiError(409, ERRORS.notDeletable);
    case 'edit_window_passed':
      return new ApiError(409, ERRORS.editWindowPassed);
    case 'delete_window_passed':
      return new ApiError(409, ERRORS.deleteWindowPassed);
    case 'username_unresolved':
      return new ApiError(
        422,
        refusal.pinRequired ? USERNAME_ERRORS.pinRequired : USERNAME_ERRORS.notFound,
        refusal.details,
      );
    case 'username_lookup_failed':
      return refusal.timedOut
        ? new ApiError(504, USERNAME_ERRORS.lookupTimeout)
        : new ApiError(502, USERNAME_ERRORS.lookupFailed);
    case 'workspace_quota':
      return workspaceQuotaError(refusal.quota, refusal.limit, refusal.resetsAt);
    case 'template_on_linked_device':
      return new ApiError(422, TEMPLATE_ERRORS.linkedDevice, [
        { path: ['template'], message: 'template needs a Cloud API device; this device is a linked device' },
      ]);
    case 'template_not_found':
      return new ApiError(422, TEMPLATE_ERRORS.notFound, refusal.details);
    case 'template_not_approved':
      return new ApiError(422, TEMPLATE_ERRORS.notApproved, refusal.details);
    case 'template_catalog_unavailable':
      return new ApiError(502, TEMPLATE_ERRORS.catalogUnavailable);
    case 'window_closed':
      return new ApiError(422, TEMPLATE_ERRORS.windowClosed, [
        {
          path: ['to'],
          message: `${refusal.recipient} has not written to this number in the last 24 hours: only a template may be sent`,
          reason: FAILURE_REASONS.windowClosed,
        },
      ]);
    case 'recipient_blocked':
      return new ApiError(422, ACCOUNT_ERRORS.recipientBlocked, [
        { path: ['to'], message: `${refusal.recipient} is on this account's blocklist` },
      ]);
  }
}
