import { isGroupAddress, type ValidationDetail } from '@mgw/contracts';
import type { QuotaName } from '@mgw/store';

/** What a device's quota counts: its queued messages and their bytes. */
export interface QueueUsage {
  messages: number;
  bytes: number;
}

/**
 * Why a request was refused. Nothing of it was written (or all of it was taken back), so the same
 * request may be made again once the cause is gone. The use cases say why; the routes say it in
 * HTTP (http/refusal-error.ts: the status and the contract's error string).
 */
export type Refusal =
  /** The request breaks a rule its schema cannot see (personalisation, a revision's recipient, a reaction's chat). */
  | { kind: 'refused'; reason: 'invalid'; details: ValidationDetail[] }
  /** An attachment sent as base64 decodes to more than the spec's 10 MB. */
  | { kind: 'refused'; reason: 'attachment_too_large' }
  /** The device takes no messages (not linked), or its link changed under the request. */
  | { kind: 'refused'; reason: 'no_device' }
  /** The device's quota has no room for the request. */
  | { kind: 'refused'; reason: 'queue_full'; queued: QueueUsage; limit: QueueUsage }
  /** The request's hit is over its token's limit; its window ends in `retryAfterMs`. */
  | { kind: 'refused'; reason: 'rate_limited'; retryAfterMs: number }
  /** A long batch took too long to accept (storage slow or away) and was given up, taken back whole. */
  | { kind: 'refused'; reason: 'gave_up' }
  /** `attachment.mediaId` names no media object of this device (another's, deleted, expired). */
  | { kind: 'refused'; reason: 'media_not_found' }
  /** `attachment.mediaId` through a pool token: a media object belongs to one device. */
  | { kind: 'refused'; reason: 'media_through_pool' }
  /** A reaction on an id that is no message of this device. */
  | { kind: 'refused'; reason: 'reaction_target_not_found' }
  /** A reaction on a message that failed: WhatsApp never had it. */
  | { kind: 'refused'; reason: 'reaction_target_failed' }
  /** An edit or delete of an id that is no message this device sent. */
  | { kind: 'refused'; reason: 'revision_target_not_found' }
  /** An edit of a message that is not a sent text of ours, or a delete of one that cannot be deleted. */
  | { kind: 'refused'; reason: 'not_editable' | 'not_deletable' }
  /** The (single) recipient is on the account's blocklist: nothing was queued. */
  | { kind: 'refused'; reason: 'recipient_blocked'; recipient: string }
  /** An edit or delete past WhatsApp's window for it. */
  | { kind: 'refused'; reason: 'edit_window_passed' | 'delete_window_passed' }
  /**
   * A username in `to` no account has, or guarded by a PIN and never resolved with it on the
   * device (features/send/username-recipients.ts); `pinRequired` when that is the only problem.
   */
  | { kind: 'refused'; reason: 'username_unresolved'; pinRequired: boolean; details: ValidationDetail[] }
  /** WhatsApp's lookup of a username in `to` did not answer (failed, or not in time). */
  | { kind: 'refused'; reason: 'username_lookup_failed'; timedOut: boolean }
  /** A quota of the device's workspace has no room for the request (workspace-quota-gate.ts). */
  | { kind: 'refused'; reason: 'workspace_quota'; quota: QuotaName; limit: number; resetsAt: string | null }
  /** `template` on a linked device: templates are the Cloud API's (features/cloud-send/). */
  | { kind: 'refused'; reason: 'template_on_linked_device' }
  /**
   * The template is not in the number's WABA in that language (`template_not_found`), or is there
   * but paused or not approved (`template_not_approved`); `details` names it and why.
   */
  | {
      kind: 'refused';
      reason: 'template_not_found' | 'template_not_approved';
      details: (ValidationDetail & { reason: string })[];
    }
  /** The Graph API did not answer the number's template list: the template could not be checked. */
  | { kind: 'refused'; reason: 'template_catalog_unavailable' }
  /** A free-form message to a cloud device's contact whose 24-hour window is closed. */
  | { kind: 'refused'; reason: 'window_closed'; recipient: string };

/** The reasons that carry nothing but themselves. */
type BareReason = Exclude<
  Refusal,
  | { details: unknown }
  | { queued: unknown }
  | { retryAfterMs: unknown }
  | { recipient: unknown }
  | { timedOut: unknown }
  | { quota: unknown }
>['reason'];

/** A refusal that needs no more than its reason. */
export function refused(reason: BareReason): Refusal {
  return { kind: 'refused', reason };
}

/** A refusal naming the request's problems. */
export function invalid(details: ValidationDetail[]): Refusal {
  return { kind: 'refused', reason: 'invalid', details };
}

export function isRefusal(outcome: object): outcome is Refusal {
  return (outcome as { kind?: unknown }).kind === 'refused';
}

/** What a check of the account's blocklist asks (`Blocklist` of @mgw/store). */
export type BlocklistLookup = { isBlocked(deviceId: string, address: string): Promise<boolean> } | undefined;

/**
 * A single recipient the account blocked is refused before anything is queued (a batch's blocked
 * recipients fail one by one instead, as opted-out ones do: send-job.ts). A pooled send's device
 * is picked later; its holder checks then. The address to look for, or none when there is no
 * blocklist to check (a pool, a group, no blocklist given).
 */
export function blocklistAddress(
  blocklist: BlocklistLookup,
  deviceId: string,
  to: string,
): string | undefined {
  if (!blocklist || deviceId.startsWith('pool:') || isGroupAddress(to)) return undefined;
  return to;
}

/**
 * The refusal of a single recipient the account blocked, asked on its own (one round trip): for a
 * request refused before its accept call, which otherwise looks for it (`SendRequest.blocklistCheck`).
 */
export async function blockedRecipient(
  blocklist: BlocklistLookup,
  deviceId: string,
  to: string,
): Promise<Refusal | undefined> {
  if (!blocklist || blocklistAddress(blocklist, deviceId, to) === undefined) return undefined;
  return (await blocklist.isBlocked(deviceId, to))
    ? { kind: 'refused', reason: 'recipient_blocked', recipient: to }
    : undefined;
}
