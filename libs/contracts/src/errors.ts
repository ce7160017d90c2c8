/** Error strings of the API contract; every service imports them from here, never retypes them. */
export const ERRORS = {
  invalidToken: 'Invalid API token',
  invalidRequest: 'Invalid request data',
  rateLimited: 'Rate limit exceeded',
  noDevice: 'No connected messenger device found',
  attachmentTooLarge: 'Attachment too large: the limit is 10 MB',
  bodyTooLarge: 'Request body too large: attachments are limited to 10 MB',
  /** 413 on PUT /webhook: its body is a URL and a list of event types. */
  webhookBodyTooLarge: 'Request body too large: webhook bodies are limited to 8 KB',
  /** 413 on POST /contacts/check: its body is at most 1,000 phone numbers. */
  contactCheckBodyTooLarge: 'Request body too large: number checks are limited to 64 KB',
  /** 413 on /otp: its body is a phone number, a code and a language. */
  otpBodyTooLarge: 'Request body too large: /otp bodies are limited to 4 KB',
  /** 413 on POST /mcp: a JSON-RPC message calling a tool (a text to a list at most). */
  mcpBodyTooLarge: 'Request body too large: MCP messages are limited to 1 MB',
  tooManyAuthFailures: 'Too many failed authentication attempts',
  notFound: 'Not found',
  /** 405 on a known path with a method it does not serve (the `Allow` header lists those it does). */
  methodNotAllowed: 'Method not allowed',
  /** 408: the request (headers or body) did not arrive within the server's timeouts. */
  requestTimeout: 'Request timeout: the request did not arrive in time',
  /** 431: the request's headers are over Node's 16 KB limit. */
  headersTooLarge: 'Request header fields too large',
  /** 413: chunk extensions of a chunked body over Node's limit. */
  chunkExtensionsTooLarge: 'Request chunk extensions too large',
  messageNotFound: 'Message not found',
  /** 404 on GET /messages/:id/media for a message without an attachment (or not an inbound one). */
  mediaNotFound: 'This message has no media',
  /** 502 on GET /messages/:id/media when the device owner could not download it from WhatsApp. */
  mediaUnavailable: 'The media could not be downloaded from WhatsApp',
  /** 504 on GET /messages/:id/media when the device owner did not answer in time. */
  mediaTimeout: 'The media download did not finish in time',
  /** 502 on POST /contacts/check when WhatsApp's contact lookup failed or did not answer. */
  contactLookupFailed: 'The WhatsApp number lookup failed; try again shortly',
  /** 504 on POST /contacts/check when the device's owner did not finish the lookups in time. */
  contactLookupTimeout: 'The WhatsApp number lookup did not finish in time; try again shortly',
  /** 404 on GET /batches/:batchId (unknown, expired, or another device's). */
  batchNotFound: 'Batch not found',
  /** A pool token on a request that acts on one device (linking, groups, webhook, contacts, OTP). */
  /** 429 on GET /events/stream: the token already has EVENT_STREAMS_PER_TOKEN streams open. */
  tooManyEventStreams: 'Too many event streams open for this token: close one first',
  /** 426 on GET /events/ws without a WebSocket upgrade. */
  webSocketUpgradeRequired:
    'This endpoint is a WebSocket: open it with a WebSocket client (Upgrade: websocket)',
  poolTokenNotAllowed: 'This token sends through a pool of devices: use a device token for this request',
  /**
   * 404 (docs/workspaces.md): a device a request names (`/devices/{deviceId}/…`) that its token may
   * not act on: another workspace's, or none. The same answer for both, so no workspace learns
   * which ids another holds.
   */
  deviceNotFound: 'Device not found',
  /** 400: a workspace token on a route that acts on one device, without naming the device. */
  deviceNotNamed:
    'This token acts on the devices of its workspace: name the device, /api/messenger/v1/devices/{deviceId}/…',
  /** 403: a device or pool token on a route that acts on the workspace (its devices, its tokens). */
  workspaceTokenRequired:
    'This request acts on a workspace: use a workspace token (a token without a device link)',
  /** 429: a workspace quota reached; `details` names it, its limit and when it resets (null: not by time). */
  workspaceQuota: 'Workspace quota reached',
  /** 404 on DELETE /tokens/{tokenId}: no token of the caller's workspace has that id. */
  workspaceTokenNotFound: 'Token not found',
  /** 413 on POST /tokens (a workspace token): 4 KB. */
  workspaceBodyTooLarge: 'Request body too large: token requests are limited to 4 KB',
  /** 403: a token of a suspended workspace (its devices keep their queues, docs/workspaces.md). */
  workspaceSuspended: 'This workspace is suspended',
  /** 409 on POST /send `edit` / `delete` (revisions.ts): the target cannot be changed any more. */
  editWindowPassed:
    'The message can no longer be edited: WhatsApp allows edits for 15 minutes after it was sent',
  deleteWindowPassed:
    'The message can no longer be deleted for everyone: WhatsApp allows it for 60 hours after it was sent',
  /** 409: an edit of a message that is not a sent text of ours (queued, failed, deleted, media). */
  notEditable: 'Only a sent text message can be edited',
  /** 409: a delete of a message that is failed, already deleted, or being sent at this moment. */
  notDeletable: 'The message cannot be deleted: it failed, is already deleted, or is being sent right now',
  /** 404 on POST /send `edit` / `delete` when the target is not one of the device's messages. */
  revisionTargetNotFound: 'The message to edit or delete was not found',
  /** 409 on POST /batches/:batchId/pause, resume or cancel when every message of the batch already left the queue. */
  batchCompleted: 'Batch already completed: every message was sent or failed',
  /** 409 on POST /batches/:batchId/pause or resume of a cancelled batch. */
  batchCancelled: 'Batch was cancelled',
  /** 404 on GET /webhook when the device has none. */
  webhookNotFound: 'No webhook is configured for this device',
  /** 404 on GET or DELETE /api/admin/v1/devices/:deviceId/proxy when the device has no proxy of its own. */
  proxyNotFound: 'No proxy is set for this device',
  /** 400 detail when the webhook URL is one the outbound guard refuses (private address, port). */
  webhookUrlNotAllowed:
    'url is not allowed: it must resolve to a public address on port 80 or 443, or to a host ALLOWED_PRIVATE_HOSTS lists',
  serviceUnavailable: 'Service unavailable: storage is not reachable',
  /**
   * 503 on an accept whose writes went out while storage stopped answering: whether they landed is
   * unknown. `outcome: 'unknown'` and the ids they carry are in the body (docs/api.md).
   */
  outcomeUnknown:
    'Service unavailable: storage did not answer, so whether the request was accepted is unknown; retry it with the same Idempotency-Key',
  internal: 'Internal server error',
  otpTimeout: 'OTP was not sent in time and will not be sent',
  /** 504 in the rare case a send attempt had started and did not end within the extra wait. */
  otpUncertain: 'OTP sending started but did not finish in time; check it with GET /messages/:id',
  /** 504: a live connection service did not answer within CONNECTION_REPLY_TIMEOUT_MS. */
  connectionTimeout: 'The connection service did not answer in time',
  /** 503: no connection service process announces itself alive (or the last one stopped). */
  connectionServiceDown: 'The connection service is not running; try again shortly',
  idempotencyConflict: 'Idempotency-Key was already used with a different request',
  idempotencyInProgress: 'A request with this Idempotency-Key is still in progress',
  /** 404 on GET/DELETE /media/:id: no such media object of this device (or it expired). */
  mediaObjectNotFound: 'Media not found',
  /** 413 on POST /media: the body is over the attachment limit. */
  mediaBodyTooLarge: 'Request body too large: media uploads are limited to 10 MB',
  /** 413 on PUT /media/settings: a list of types and a number. */
  mediaSettingsBodyTooLarge: 'Request body too large: media settings are limited to 8 KB',
  /** 429 on POST /media: the device already stores its quota of media. */
  mediaQuotaFull: 'Too much media is stored for this device; delete some or wait until it expires',
  /** 503: the media store (S3) did not take or give the object. */
  mediaStoreUnavailable: 'The media store is unavailable; try again',
  /** 400 detail: a POST /media without a body. */
  mediaBodyRequired: 'The request body must be the file itself (at least 1 byte)',
  unsupportedMediaType: 'Request bodies must be application/json',
  /** 400 detail on /connect and /disconnect when the request carries a body. */
  noBodyExpected: 'This endpoint takes no request body',
  /** 502 on /otp when the send job ended failed; the job's reason follows the prefix. */
  otpFailedPrefix: 'OTP could not be sent: ',
  /** 502 on /connect and /disconnect when the connection service failed while handling it. */
  connectionFailed: 'The connection service could not handle the request',
  /** 404 on GET/POST /connect/passkey…: the device's pairing waits on no passkey request. */
  passkeyNotPending: 'No passkey request is waiting for this device',
  /** 409 on POST /connect/passkey…: the link is at another step (`step` says which). */
  passkeyWrongStep: 'The passkey link is at another step',
  /** 422 on POST /connect/passkey: WhatsApp refused the assertion; the link attempt ended (`passkey_rejected`). */
  passkeyRejected: 'WhatsApp refused the passkey assertion; the link attempt ended',
  /** Error of a connection reply with success:false and no error text. */
  connectionRefused: 'The connection request was refused',
  /** 429 when a device already holds its quota of queued messages or bytes. */
  deviceQueueFull: 'Too many messages are queued for this device; wait until some are sent',
  /** 400 detail when the Idempotency-Key header is malformed. */
  invalidIdempotencyKey: 'Idempotency-Key must be 1 to 255 printable ASCII characters',

  // Refusals of the connection service (the API passes them through with their status).
  phoneNumberRequired: 'phoneNumber is required for the pairingCode method',
  /** The sender that owns the device did not log it out in time; it stays linked. */
  logoutIncomplete: 'The device is busy; the logout did not complete, try again',
  /** 409: a pairing with another method (or, by pairing code, another phone number) is running. */
  pairingOtherMethod:
    'A pairing with another method or phone number is in progress; retry with forceNew=true',
  /** 409: /connect while a /disconnect of the same device runs (a client race). */
  disconnectInProgress: 'A disconnect of this device is in progress; connect again once it answered',
  /** 409: connects with forceNew=true kept replacing the pairing this /connect waited for. */
  pairingReplaced: 'A newer connect with forceNew=true replaced this pairing; connect again for its code',
  /** 409: a /disconnect ended the pairing this /connect was waiting for (a client race). */
  pairingCancelledByDisconnect: 'A disconnect of this device ended the pairing; connect again to link',
  /** Another process holds the device's lease (e.g. a pairing that is still ending). */
  deviceBusy: 'The device is busy (held by another process); try again',
  /** 503: the pairing socket gave no QR / pairing code (WhatsApp); the reason follows the prefix. */
  pairingNotStartedPrefix: 'Could not start pairing: ',

  // A device's Cloud API configuration (docs/cloud-api.md): PUT/GET/DELETE /cloud, and /connect.
  /** 404 on GET or DELETE /cloud: the device holds no Cloud API configuration (its engine is `linked`). */
  cloudNotConfigured: 'This device is not a Cloud API number',
  /** 409 on PUT /cloud: the device is linked by QR or pairing code, or a pairing of it is running. */
  cloudDeviceLinked:
    'This device is linked by QR or pairing code (or a pairing is in progress): disconnect it before making it a Cloud API number',
  /** 409 on PUT /cloud: another device already is this phone-number id (which one is not said). */
  cloudNumberTaken: 'Another device already is this Cloud API phone number',
  /** 422 on PUT /cloud and /connect: Meta refused the credentials; `details` say what Meta said. */
  cloudCredentialsRefused: "The Graph API refused the device's Cloud API credentials",
  /** 502 on PUT /cloud and /connect: Meta could not be reached, or answered with a failure of its own. */
  cloudGraphUnreachable: 'The Graph API could not be reached or failed; try again shortly',
  /** 413 on PUT /cloud: its body is two ids, three secrets and three settings. */
  cloudBodyTooLarge: 'Request body too large: Cloud API configurations are limited to 16 KB',
  /**
   * 409 from the connection service: a /connect or /disconnect of a device that became a Cloud API
   * number after the API looked (the API itself connects and disconnects cloud devices).
   */
  cloudDeviceRaced: 'This device became a Cloud API number meanwhile; send the request again',
  /** 400 detail on /connect with method=pairingCode for a cloud device. */
  cloudNeedsNoPairing:
    'method: a Cloud API device needs no pairing code: /connect checks its credentials with the Graph API',
} as const;

/** Success messages of /connect and /disconnect (the `message` field of the answer). */
export const CONNECTION_MESSAGES = {
  alreadyConnected: 'Already connected',
  linkedConnecting: 'Device is linked; its connection is being established',
  disconnected: 'Disconnected and logged out',
  alreadyDisconnected: 'Already disconnected',
  pairingCancelled: 'Pairing cancelled',
  /** A connect while the account's link waits for its passkey (docs/passkeys.md). */
  passkeyPending: 'The account is protected by a passkey: the link waits for it (GET /connect/passkey)',
  /** /disconnect or DELETE /cloud of a Cloud API device: its configuration (and secrets) are gone. */
  cloudForgotten: 'Disconnected: the Cloud API configuration was removed',
} as const;

/** The message that the spec puts in `details` when neither text nor attachment is given. */
export const EITHER_TEXT_OR_ATTACHMENT = 'Either text or attachment must be provided';

/** Reasons a message ends `failed`; stored on the message record and used in metrics labels. */
export const FAILURE_REASONS = {
  deviceDisconnected: 'device_disconnected',
  loggedOut: 'logged_out',
  notOnWhatsApp: 'not_on_whatsapp',
  invalidNumber: 'invalid_number',
  attachmentTooLarge: 'attachment_too_large',
  attachmentUnreachable: 'attachment_unreachable',
  replyTargetNotFound: 'reply_target_not_found',
  rejectedByServer: 'rejected_by_server',
  sendFailed: 'send_failed',
  /** The job could not be added to its queue (the API answered 503); nothing was sent. */
  enqueueFailed: 'enqueue_failed',
  /** The attachment URL points at an address the outbound guard refuses; it was never contacted. */
  attachmentUrlNotAllowed: 'attachment_url_not_allowed',
  /** The request's content was gone (kept for the message retention); nothing was sent. */
  contentExpired: 'content_expired',
  /** An OTP the API already answered 504 for: it is never sent afterwards. */
  otpExpired: 'otp_expired',
  /** The recipient is on the device's suppression list (it opted out); nothing was asked of WhatsApp. */
  optedOut: 'opted_out',
  /** Its batch was cancelled (POST /batches/:batchId/cancel) before the message was sent. */
  cancelled: 'cancelled',
  /** A send to a LID (`<digits>@lid`) the device has never met: nothing was asked of WhatsApp. */
  unknownContact: 'unknown_contact',
  /** The message was deleted (POST /send `delete`) while it waited in the queue: never sent. */
  deleted: 'deleted',
  /** An edit or delete whose target left WhatsApp's window (or was deleted) before it could go. */
  revisionRefused: 'revision_refused',
  /** A group the account may not write to: not a member, or only admins may write (announce). */
  notAllowedInGroup: 'not_allowed_in_group',
  /** The uploaded media (`attachment.mediaId`) was deleted or expired before the message went. */
  mediaGone: 'media_gone',
  /** The media store (S3) did not give the uploaded media back on any attempt. */
  mediaStoreUnavailable: 'media_store_unavailable',
  /** The recipient is on the account's blocklist (blocked after the message was accepted); never sent. */
  recipientBlocked: 'recipient_blocked',
  /** A status update whose every viewer opted out of the device before it went: nothing was sent. */
  statusAudienceEmpty: 'status_audience_empty',
  /**
   * WhatsApp refused (ack 463) a first contact that carried no privacy token (no tctoken, no
   * cstoken: the device has no NCT salt yet) while the account is neither locked nor capped.
   */
  firstContactTokenMissing: 'first_contact_token_missing',
  // --- the Cloud API engine (docs/cloud-api.md "Reasons") ---
  /** A free-form message outside the contact's 24-hour window (Graph 131047): send a template. */
  windowClosed: 'window_closed',
  /** The number's throughput or Meta's rate limits (Graph 130429, 4, 80007) past every retry. */
  rateLimited: 'rate_limited',
  /** Too many messages to one contact in a short time (Graph 131056) past every retry. */
  pairRateLimited: 'pair_rate_limited',
  /** The number reached its messaging tier's unique-contact limit, or Meta's spam limit (131048). */
  messagingLimitReached: 'messaging_limit_reached',
  /** The template does not exist in that language, or is not approved (132001, 132016). */
  templateNotFound: 'template_not_found',
  /** The template is paused for low quality (132015). */
  templatePaused: 'template_paused',
  /** The template's parameters do not fit it (132000, 132012). */
  templateParamsInvalid: 'template_params_invalid',
  /** The device's access token expired or was revoked (190): the device turns disconnected. */
  cloudTokenExpired: 'cloud_token_expired',
  /** The number is blocked, restricted or not registered at Meta (131031, 133010, 368). */
  numberBlocked: 'number_blocked',
  /** WhatsApp could not deliver to the contact (131026: not on WhatsApp, old app, no consent). */
  undeliverable: 'undeliverable',
  /**
   * An earlier attempt's request reached the Graph API and its answer was lost: the Cloud API has no
   * idempotency key, so the message is not sent blind a second time.
   */
  sendOutcomeUnknown: 'send_outcome_unknown',
} as const;
export type FailureReason = (typeof FAILURE_REASONS)[keyof typeof FAILURE_REASONS];
