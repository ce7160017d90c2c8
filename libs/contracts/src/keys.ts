/**
 * Redis key and channel builders: the one place that knows how keys are spelled (with the Cloud
 * API engine's, spelled in cloud-keys.ts and part of `keys`).
 * Everything lives under `mgw:` so a shared Redis can be inspected and cleaned by prefix.
 *
 * Every key of one device carries the hash tag `{<deviceId>}`: on Redis Cluster a device's lease,
 * auth state, records and send queue (see `sendQueueName`) then live in one slot, so the Lua
 * scripts and transactions that touch several of them work, while devices spread over the cluster.
 * Device ids are slugs (`DEVICE_ID_PATTERN`), so they never contain `}` or glob characters.
 */
import { P, consoleUser, device, pool, workspace } from './key-spaces.js';
import { cloudKeys } from './cloud-keys.js';

export const keys = {
  // --- global ---------------------------------------------------------------------------------
  /** Hash: the token record, found by the SHA-256 of the token value. */
  tokenByHash: (sha256Hex: string) => `${P}:token:${sha256Hex}`,
  /** Hash: token id -> SHA-256, so tokens can be listed and revoked without their values. */
  tokenIndex: () => `${P}:tokens`,
  /** Set: device ids that have credentials; the senders claim these. */
  linkedDevices: () => `${P}:devices:linked`,
  /** String: stored first response of an Idempotency-Key (per token), 24 h; sealed. */
  idempotency: (tokenHash: string, key: string) => `${P}:idem:${tokenHash}:${key}`,
  /** Rate-limit counters, per endpoint (rate-limit-redis adds the token hash). */
  rateLimitPrefix: (endpoint: string) => `${P}:rl:${endpoint}:`,
  /** Pub/sub channel: the SHA-256 of a revoked token (API processes drop it from their cache). */
  tokensChannel: () => `${P}:events:tokens`,
  /** Pub/sub channel: tells senders to look for devices to claim now (after a link). */
  devicesChannel: () => `${P}:events:devices`,
  /**
   * Pub/sub channel: commands to the sender that owns a device (`DeviceCommand`, device-commands.ts;
   * carried by libs/store/src/devices/device-commands.ts).
   */
  deviceCommands: () => `${P}:events:device-commands`,
  /** Pub/sub channel: commands between connection replicas (e.g. end a pairing you hold). */
  connectionCommands: () => `${P}:events:connection-commands`,
  /**
   * Sorted set: connection service processes (lease owner id) scored by the time their liveness
   * expires (ms, Redis server clock). The API answers 503 at once when none is alive.
   */
  connectionWorkers: () => `${P}:connection:alive`,
  /** String: the media retention sweep's lock (one sender sweeps the bucket per interval); PX. */
  mediaSweepLock: () => `${P}:media:sweep-lock`,
  /**
   * Hash: an admin (dashboard) session — CSRF token, times, and who it is: `role` (operator, or a
   * console user's admin | agent; absent: operator), `workspace` (a user's, or the one an operator
   * views), `user` and its record's `stamp` — found by the SHA-256 of its cookie; TTL.
   */
  adminSession: (sha256Hex: string) => `${P}:admin:session:${sha256Hex}`,
  /** Hash: an admin API token's record (automation), found by the SHA-256 of its value. */
  adminTokenByHash: (sha256Hex: string) => `${P}:admin:token:${sha256Hex}`,
  /** Hash: admin token id -> SHA-256, so admin tokens can be listed and revoked without their values. */
  adminTokenIndex: () => `${P}:admin:tokens`,
  /** Counter: failed admin sign-ins of one client IP in the current window; TTL = the window. */
  adminSignInFailures: (ip: string) => `${P}:admin:signin-failures:${ip}`,
  /** String: a process's readiness write probe (expires in seconds); proves Redis accepts writes. */
  readyProbe: (processName: string) => `${P}:ready-probe:${processName}`,
  /**
   * Sorted set: live sender processes (lease owner id) scored by the time their liveness expires
   * (ms, Redis server clock); the fair share of each is the linked devices over the live ones.
   * Hash tag `{senders}`: the roster script touches both roster keys, in one slot on a cluster.
   */
  senders: () => `${P}:{senders}:alive`,
  /** Hash: sender (lease owner id) -> devices it holds, refreshed with its liveness. */
  senderLoads: () => `${P}:{senders}:load`,
  /**
   * Sorted set: sender processes (lease owner id) scored by when their fast liveness expires (ms,
   * Redis clock), beaten every second or so from each sender's lease-renewer thread; the devices of
   * a sender whose entry expired are taken over before their leases run out (@mgw/store's
   * coordination/liveness.ts).
   */
  senderLiveness: () => `${P}:{senders}:live`,
  /**
   * Hash {tokens, at}: the token bucket that admits device socket opens for every sender of one
   * scope (`CONNECT_RATE_SCOPE`: the install by default, or a host), refilled on Redis's clock; it
   * expires once full (`lua/connect-admit-1.lua`).
   */
  connectBucket: (scope: string) => `${P}:connect-bucket:${scope}`,
  /** Set: device ids that have a webhook endpoint; the notifier delivers the events of these. */
  webhookDevices: () => `${P}:webhooks`,
  /**
   * Pub/sub channel: a device id whose event outbox just received an event (the notifier reads
   * it at once instead of waiting for its sweep).
   */
  eventsChannel: () => `${P}:events:outbox`,
  /**
   * Every event's device id, published by `mgw_emit` for the API's event streams (GET
   * /events/stream). Lua derives it from `eventsChannel` (its name plus `:log`), so no caller passes it.
   */
  eventLogChannel: () => `${P}:events:outbox:log`,
  /** Pub/sub channel: a device id whose webhook was set, rotated, disabled or removed (notifiers re-read it). */
  webhooksChannel: () => `${P}:events:webhooks`,
  /** String: held (with a TTL) by the API process trimming the event logs this round (EventLogTrimmer). */
  eventLogTrimLock: () => `${P}:event-log:trim-lock`,
  /** List: the answer to one device command (the requester BLPOPs it). */
  commandReply: (requestId: string) => `${P}:cmd-reply:${requestId}`,

  // --- per device (hash tag {deviceId}) --------------------------------------------------------
  /** Hash: the session record of a device (status, phone, name, picture). */
  session: (deviceId: string) => `${device(deviceId)}:session`,
  /**
   * Hash: per-device settings: sending-policy overrides (see libs/store/src/policy/device-settings.ts),
   * warm-up start, `receiveStatuses` (libs/store/src/broadcasts/status-settings.ts).
   */
  deviceSettings: (deviceId: string) => `${device(deviceId)}:settings`,
  /** String: the device lease, `{owner, epoch}` JSON with a TTL. */
  lease: (deviceId: string) => `${device(deviceId)}:lease`,
  /**
   * String: a directed hand-over of a device (`{to, at}` JSON, TTL): while it lives only the
   * sender `to` may acquire the lease (fair share: the giver released it for that sender).
   */
  handover: (deviceId: string) => `${device(deviceId)}:handover`,
  /** Counter: lease epochs of a device, so ownership changes are totally ordered. */
  leaseEpoch: (deviceId: string) => `${device(deviceId)}:lease-epoch`,
  /** String: Baileys credentials of a device (JSON, Buffer-aware), sealed. */
  authCreds: (deviceId: string) => `${device(deviceId)}:auth:creds`,
  /** Hash per Signal key type: field = key id, value = JSON, sealed per field. */
  authKeys: (deviceId: string, type: string) => `${device(deviceId)}:auth:keys:${type}`,
  /** SCAN pattern of every credential and key of a device (for the purge on logout). */
  authPattern: (deviceId: string) => `${device(deviceId)}:auth:*`,
  /** Hash: a message record (TTL = message retention). */
  message: (deviceId: string, messageId: string) => `${device(deviceId)}:msg:${messageId}`,
  /** String: WhatsApp message id -> our message id, for receipts and replies. */
  messageByPlatformId: (deviceId: string, platformMessageId: string) =>
    `${device(deviceId)}:msg-by-wa:${platformMessageId}`,
  /**
   * Sorted set: the device's message ids (outbound when accepted, inbound when received) scored
   * by a per-device sequence (`messageSeq`), newest highest: GET /messages pages through it.
   */
  messageIndex: (deviceId: string) => `${device(deviceId)}:msg-index`,
  /** Counter: the sequence that orders `messageIndex`. */
  messageSeq: (deviceId: string) => `${device(deviceId)}:msg-seq`,
  /**
   * Counter: messages of the account's history (history sync) recorded lately; bounds them
   * (HISTORY_SYNC_MAX_MESSAGES) within its TTL (a day from the last one).
   */
  historyCount: (deviceId: string) => `${device(deviceId)}:history-count`,
  /** String: WhatsApp id of a message a contact sent -> our message id (a redelivery is recorded once). */
  inboundByPlatformId: (deviceId: string, platformMessageId: string) =>
    `${device(deviceId)}:msg-in-by-wa:${platformMessageId}`,
  /**
   * String (the proto `Message`, sealed; its base64 before encryption) of a message we sent, by
   * its WhatsApp id: Baileys' `getMessage` re-encrypts it on a retry receipt, and a reply quotes
   * it. TTL = message retention.
   */
  messageProto: (deviceId: string, platformMessageId: string) =>
    `${device(deviceId)}:msg-proto:${platformMessageId}`,
  /**
   * Hash: the content a request shares between its messages (sealed text, attachment descriptor
   * and base64 bytes, reply target), stored once; deleted when its last message is settled.
   */
  content: (deviceId: string, contentId: string) => `${device(deviceId)}:content:${contentId}`,
  /**
   * Hash: a stored media object's record (`POST /media`, or an inbound attachment kept on
   * arrival): size, MIME type, file name, source, times, and where its bytes are. Expires with the
   * object (PEXPIREAT = its retention); DELETE /media/:id deletes it.
   */
  media: (deviceId: string, mediaId: string) => `${device(deviceId)}:media:${mediaId}`,
  /** String: a media object's bytes when the media store is Redis (sealed); expires with its record. */
  mediaBlob: (deviceId: string, mediaId: string) => `${device(deviceId)}:media-blob:${mediaId}`,
  /**
   * Sorted set: the device's media ids scored by their expiry (ms), and Hash: their sizes plus
   * `_total`: the device's media quota (MEDIA_DEVICE_MAX_BYTES / _OBJECTS), expired entries
   * dropped by the next reserve; both expire a retention after the last upload.
   */
  mediaExpiries: (deviceId: string) => `${device(deviceId)}:media-exp`,
  mediaSizes: (deviceId: string) => `${device(deviceId)}:media-sizes`,
  /** Hash: the device's media settings (which inbound kinds are kept on arrival, their size cap). */
  mediaSettings: (deviceId: string) => `${device(deviceId)}:media-settings`,
  /** Hash: what the device holds in its queue (`messages`, `bytes`), checked against its quota. */
  deviceQueue: (deviceId: string) => `${device(deviceId)}:queue-stats`,
  /**
   * Counter: a token's `/send` hits in the current rate-limit window (by the token's hash), in the
   * device's slot so the accept script that writes a request's messages counts its hit.
   */
  sendRateLimit: (deviceId: string, tokenHash: string) => `${device(deviceId)}:rl:send:${tokenHash}`,
  /** Hash: the pairing in progress for a device (current QR / pairing code, owner), with a TTL. */
  pairing: (deviceId: string) => `${device(deviceId)}:pairing`,
  /**
   * String: the /disconnect running for a device (`{id, owner, state, reply?}` JSON, TTL), so a
   * second disconnect joins it and a /connect meanwhile answers 409.
   */
  disconnecting: (deviceId: string) => `${device(deviceId)}:disconnecting`,
  /**
   * Hash: the device's webhook endpoint (`url`, `events`, `secret` sealed, `previousSecret` sealed
   * with `previousUntil` during a rotation, `disabledAt`/`disabledReason`, `failures`).
   */
  webhook: (deviceId: string) => `${device(deviceId)}:webhook`,
  /**
   * Stream: events of the device waiting for their first webhook attempt, in emission order
   * (written atomically with the change they report, see libs/store/src/events/event-publish.ts); the notifier
   * holding the device's delivery lease reads it in order and deletes each entry once its first
   * attempt ended (libs/store/src/webhooks/webhook-deliveries.ts).
   */
  eventOutbox: (deviceId: string) => `${device(deviceId)}:events`,
  /**
   * Stream: every event of the device, whether its webhook wants it or not, written by the same
   * Lua step as its outbox entry (same fields), read by GET /events (libs/store/src/events/event-log.ts).
   * Bounded by count (`EVENT_LOG_MAX_EVENTS`) and by age (`EVENT_LOG_RETENTION_HOURS`).
   */
  eventLog: (deviceId: string) => `${device(deviceId)}:event-log`,
  /** Hash: a batch's counts (`total`, one field per status), `createdAt`, `completedAt`; TTL = retention. */
  batch: (deviceId: string, batchId: string) => `${device(deviceId)}:batch:${batchId}`,
  /**
   * Set: ids of the batch's queued messages the sender holds right now (`held` on their records),
   * so GET /batches/:batchId counts them; always `keys.batch(...)` + `:held` (the message scripts
   * build it from the batch key). TTL = retention.
   */
  batchHeld: (deviceId: string, batchId: string) => `${device(deviceId)}:batch:${batchId}:held`,
  /** Sorted set: the device's batch ids scored by acceptance time (ms): GET /batches pages it. */
  batchIndex: (deviceId: string) => `${device(deviceId)}:batch-index`,
  /** Hash: an inbound attachment downloaded for one GET /messages/:id/media (`bytes` sealed, `mimeType`, `fileName`), 60 s. */
  mediaDownload: (deviceId: string, requestId: string) => `${device(deviceId)}:media-dl:${requestId}`,
  /**
   * String: what WhatsApp's contact lookup answered for one number (`""` when it is not on
   * WhatsApp, else its JID and, when known, a space and its LID), with its own TTL
   * (CONTACT_CACHE_TTL_SECONDS). See libs/store/src/contacts/contact-cache.ts.
   */
  contact: (deviceId: string, phone: string) => `${device(deviceId)}:contact:${phone}`,
  /**
   * Hash: the device's phone <-> LID map (`p:<phone>` -> LID digits, `l:<lid digits>` -> phone or
   * `""` when only the LID is known), fed by everything the client learns; removed on logout. See
   * libs/store/src/contacts/contact-identities.ts.
   */
  contactIdentities: (deviceId: string) => `${device(deviceId)}:identities`,
  /** Counter: numbers the number check looked up at WhatsApp in the current day window; TTL = the window. */
  contactLookups: (deviceId: string) => `${device(deviceId)}:contact-lookups`,
  /**
   * Hash: what a device sent in one cap window (`sent`, `firstContacts`), by window start (ms);
   * expires two windows after it starts. See libs/store/src/policy/admission.ts.
   */
  deviceUsage: (deviceId: string, windowStart: number) => `${device(deviceId)}:usage:${windowStart}`,
  /**
   * Set: numbers the account has a chat with (they wrote to it, or it sent them a message): a
   * message to any other number is a first contact, counted against the first-contact cap.
   */
  deviceChats: (deviceId: string) => `${device(deviceId)}:chats`,
  /**
   * Hash: one status update of the device (libs/store/src/broadcasts/status-store.ts): `audience`
   * (its viewers' JIDs, sealed), `size`, and `v:<viewer JID>` -> when that viewer opened it (ISO).
   * Written when the status is accepted; expires a day after its `sendAt` (or acceptance) plus a
   * margin; viewers are at most its audience.
   */
  statusRecord: (deviceId: string, messageId: string) => `${device(deviceId)}:status:${messageId}`,
  /**
   * Sorted set: the device's status updates (messageId scored by when it is due, ms), at most
   * `STATUS_LIMITS.indexed` (the oldest leave); expires with its newest status's record.
   */
  deviceStatuses: (deviceId: string) => `${device(deviceId)}:statuses`,
  /**
   * Hash: the channels the device created or followed through the gateway (WhatsApp has no query
   * for them): channel JID -> JSON `{ role, name, since }`. At most `CHANNEL_LIMITS.listed` (the
   * channel routes drop the oldest); deleted on logout (forgetAccount) and when the account
   * deletes or unfollows the channel.
   */
  deviceChannels: (deviceId: string) => `${device(deviceId)}:channels`,
  /**
   * Hash: what the device's messages did in one UTC hour (`sent`, `delivered`, `read`, `failed`),
   * each message counted once per status in the hour that status happened; `at` is an ISO time (its
   * hour, `2026-11-23T18`, names the key). Incremented by the message transition script, which
   * builds the key from `deviceActivity(deviceId, '')` plus the status time's first 13 characters.
   * Expires `DEVICE_ACTIVITY_TTL_SECONDS` after its last count. See libs/store/src/devices/device-activity.ts.
   */
  deviceActivity: (deviceId: string, at: string) => `${device(deviceId)}:activity:${at.slice(0, 13)}`,
  /**
   * Hash: WhatsApp's signals about the device's standing in one UTC hour (`refused463`,
   * `rateLimited`, `rejected`, `reconnects`, `logouts`), named by the hour like `deviceActivity`;
   * expires `HEALTH_WINDOW_HOURS` + 1 hours after its last count. The health score reads the last
   * `HEALTH_WINDOW_HOURS` of them. See libs/store/src/policy/health-signals.ts.
   */
  deviceHealth: (deviceId: string, at: string) => `${device(deviceId)}:health:${at.slice(0, 13)}`,
  /** Hash: the device's sending pause (`reason`, `until` ms, `since` ms) while WhatsApp pushes back. */
  deviceRestriction: (deviceId: string) => `${device(deviceId)}:restriction`,
  /**
   * String: when (ms) the device last claimed a message for the socket, written by the claim script
   * (kept an hour). A sender that takes the device over (failover, hand-over, restart) paces
   * its first message from it, not from nothing. See services/sender/src/send/pacing.ts.
   */
  devicePace: (deviceId: string) => `${device(deviceId)}:pace`,
  /**
   * Sorted set: the device's suppression list — numbers that opted out (a keyword, or an
   * operator) scored by when (ms). A message to one of them fails `opted_out` unsent (OTPs
   * excepted). See libs/store/src/opt-outs/.
   */
  optOuts: (deviceId: string) => `${device(deviceId)}:opt-outs`,
  /**
   * Sorted set: the device's chats (a phone, `<digits>@lid` or a group id) scored by their last
   * activity (ms): GET /chats pages it. At most CHAT_LIMITS.chats (the least recently active go,
   * with their `chat` keys); TTL = message retention, renewed by each message. Written by
   * `lua/includes/chat-record.lua` (libs/store/src/chats/chat-index.ts).
   */
  chatIndex: (deviceId: string) => `${device(deviceId)}:chat-index`,
  /**
   * Hash: one chat of the device (`type`, `seq`, `lastMessageId`, `lastDirection`, `lastAt`,
   * `lastAtMs`, a group's `subject` sealed, `unread`: the size of its `:unread` set, kept by the
   * scripts that change the set); TTL = message retention. Its message ids are
   * `chat(...)` + `:msgs` (sorted set by the chat's `seq`, at most CHAT_LIMITS.messagesPerChat) and
   * its unread inbound ones `chat(...)` + `:unread` (at most CHAT_LIMITS.unreadPerChat); the
   * scripts build both from this key, in this slot, and delete all three when the chat leaves the index.
   */
  chat: (deviceId: string, chatId: string) => `${device(deviceId)}:chat:${chatId}`,
  /**
   * String: the device's proxy (its URL with any credentials), sealed (libs/store
   * devices/device-proxy.ts); read by the sender each time it opens the device's socket.
   */
  deviceProxy: (deviceId: string) => `${device(deviceId)}:proxy`,
  // --- a Cloud API device's (cloud-keys.ts) and the cloud devices' global indexes ---
  ...cloudKeys,
  /**
   * Set: the account's blocklist as WhatsApp last told the device's holder (`<digits>@lid`, or a
   * phone number when WhatsApp named one): replaced from the blocklist query at every connect,
   * changed by the account's blocks and WhatsApp's blocklist pushes, at most BLOCKLIST_MAX entries;
   * removed on logout. A send to an entry is refused before it is queued. See
   * libs/store/src/contacts/blocklist.ts.
   */
  blocklist: (deviceId: string) => `${device(deviceId)}:blocklist`,
  /**
   * Hash: the WhatsApp Business labels the device learned from app-state sync, one field per label
   * id -> `{ name, color, predefinedId? }` JSON sealed (the name is the account's text). A label's
   * chats are `labels(...)` + `:<labelId>:chats` (sorted set of chat ids, score 0, read in lexical
   * order), built by the scripts in this slot; the ids holding any of those are `labelIds`. At most
   * LABEL_LIMITS.labels labels and LABEL_LIMITS.chatsPerLabel chats each; owner: the sender holding
   * the device (libs/store/src/labels/label-store.ts), removed on logout (forgetAccount, the
   * connection service's disconnect); no TTL: it is the account's durable state.
   */
  labels: (deviceId: string) => `${device(deviceId)}:labels`,
  /** Hash: every label id the device keeps anything of (name or chats) -> how many chats carry it; see `labels`. */
  labelIds: (deviceId: string) => `${device(deviceId)}:label-ids`,
  /** Sorted set: the chats carrying a label (see `labels`; the scripts build it from that key). */
  labelChats: (deviceId: string, labelId: string) => `${device(deviceId)}:labels:${labelId}:chats`,
  /**
   * String: a profile photo (or a channel's picture) on its way from the API to the device's holder
   * (sealed), 60 s; the holder deletes it as it reads it.
   */
  profilePhoto: (deviceId: string, requestId: string) => `${device(deviceId)}:profile-photo:${requestId}`,

  // --- broker relay (RabbitMQ, NATS JetStream; see libs/store/src/events/broker-relay-state.ts) ---
  /**
   * Hash: how far transport `transport` has published the device's event log: `id` (the last
   * stream entry id published or passed over) and `ord` (its ordinal in the log's whole history,
   * from XINFO's entries-added, to count events lost to retention). Moved on only by the holder of
   * `brokerLease` (fenced), after the broker confirmed.
   */
  brokerCursor: (deviceId: string, transport: string) => `${device(deviceId)}:broker:${transport}:cursor`,
  /** String: the notifier publishing the device's events to `transport` now (`<owner>:<epoch>`, TTL). */
  brokerLease: (deviceId: string, transport: string) => `${device(deviceId)}:broker:${transport}:lease`,
  /** Counter: the epochs of `brokerLease` (fencing). */
  brokerFence: (deviceId: string, transport: string) => `${device(deviceId)}:broker:${transport}:fence`,
  /**
   * Hash: the device's broker settings, one field per transport: `{enabled, events}` JSON, with
   * `after` (the event log id the setting governs after) and `history` (the settings before it,
   * each with its own `after`) once it changed while the device had a log
   * (libs/store/src/events/broker-settings.ts).
   */
  brokerSettings: (deviceId: string) => `${device(deviceId)}:brokers`,
  /**
   * String: when (ms) `transport` first ran on this install: a device without a cursor publishes
   * its events from then on (the log's older history is not replayed into a new broker).
   */
  brokerStart: (transport: string) => `${P}:brokers:${transport}:start`,

  // --- per pool (hash tag {pool:<poolId>}; see libs/store/src/pools/) ---------------------------
  /** Set: the ids of every pool (the admin API's list). */
  poolIndex: () => `${P}:pools`,
  /** Hash: a pool's definition: `id`, `name`, `devices` (JSON array of device ids), `createdAt`, `updatedAt`. */
  pool: (poolId: string) => `${pool(poolId)}:def`,
  /** Hash: recipient phone -> the pool device that sends to it (stickiness). */
  poolSticky: (poolId: string) => `${pool(poolId)}:sticky`,
  /**
   * Hash: a pooled batch: `createdAt`, `total`, `devices` (JSON array of the devices that held a
   * share), `sendAt`, and its control fields (`pausedAt`, `cancelledAt`); its per-device counts are
   * the devices' own `keys.batch(deviceId, batchId)`.
   */
  poolBatch: (poolId: string, batchId: string) => `${pool(poolId)}:batch:${batchId}`,
  /** Sorted set: the pool's batches by acceptance time (ms), for GET /batches. */
  poolBatchIndex: (poolId: string) => `${pool(poolId)}:batch-index`,
  /** Set: the pool's batches that may still have messages to move (not completed, not cancelled). */
  poolOpenBatches: (poolId: string) => `${pool(poolId)}:batches-open`,
  /** Set: the ids of a pooled batch's messages given to one device and not yet known to be taken by it. */
  poolShare: (poolId: string, batchId: string, deviceId: string) =>
    `${pool(poolId)}:batch:${batchId}:share:${deviceId}`,
  /** Hash: messageId -> the device that holds it now (GET /messages/:id through a pool token). */
  poolOwners: (poolId: string) => `${pool(poolId)}:owners`,
  /** Hash: messageId -> JSON `{ from, to, batchId }`: a move begun and not finished (its journal). */
  poolMoves: (poolId: string) => `${pool(poolId)}:moves`,
  /** String: the lease of the one process that moves the pool's messages now. */
  poolMoverLease: (poolId: string) => `${pool(poolId)}:mover`,

  // --- workspaces (docs/workspaces.md; hash tag {ws:<workspaceId>}; libs/store/src/workspaces/) -
  /** Set: the ids of every workspace (the admin API's list). */
  workspaceIndex: () => `${P}:workspaces`,
  /**
   * Hash: a workspace's record: `id`, `name`, `status` (active | suspended), its quotas
   * (`quota:<name>`, absent = none), `createdAt`, `updatedAt`.
   */
  workspace: (workspaceId: string) => `${workspace(workspaceId)}:def`,
  /** Set: the device ids the workspace owns (its device quota counts these). */
  workspaceDevices: (workspaceId: string) => `${workspace(workspaceId)}:devices`,
  /**
   * Hash: token id -> SHA-256 of the workspace's API tokens (as `tokenIndex` for all), so a
   * workspace lists its tokens without reading every token, and its count is bounded
   * (WORKSPACE_MAX_TOKENS). Default's also lists the tokens without a workspace (the shape from
   * before workspaces, default's). Filled for tokens from before it once, at the API's start
   * (`workspaceTokensIndexed`).
   */
  workspaceTokens: (workspaceId: string) => `${workspace(workspaceId)}:tokens`,
  /**
   * String: `2` once every API token is in its `workspaceTokens`, default's without a workspace
   * too (the backfill ran); `1` was written by the release that indexed workspace tokens only.
   */
  workspaceTokensIndexed: () => `${P}:workspaces:tokens-indexed`,
  /**
   * Hash: device id -> the workspace that owns it. A device absent here belongs to `default`
   * (DEFAULT_WORKSPACE): every device of an install from before workspaces is default's as it is.
   */
  deviceWorkspaces: () => `${P}:device-workspaces`,
  /**
   * Pub/sub channel: a workspace id whose record changed, a device id given to a workspace, or a
   * pool id created or deleted (processes caching whose it is read it again).
   */
  workspacesChannel: () => `${P}:events:workspaces`,
  /**
   * String: the messages a workspace's quota counted as accepted on one UTC day (`day`:
   * `2026-11-28`), reserved before the accept call and given back for what it refused; expires two
   * days after. Only for a workspace with a `messagesPerDay` quota; it starts from what the
   * workspace's devices accepted that day (`deviceDayUsage`, always counted), and is deleted when
   * the quota is removed or newly set. See libs/store/src/workspaces/workspace-quota.ts.
   */
  workspaceDayCount: (workspaceId: string, day: string) =>
    `${workspace(workspaceId)}:day:${day.slice(0, 10)}`,
  /**
   * Hash: what a device did on one UTC day (`day`: an ISO time; its first 10 characters name it):
   * `accepted`, `otp`, `sent`, `delivered`, `read`, `failed`, `failed:<reason>`, `received`,
   * `mediaBytes`. Counted by the scripts that write the records (the accept call, the message
   * transition, the inbound record, the media reserve), each in the same atomic step, so the counts
   * are the records'. A workspace's usage is the sum over its devices. Expires
   * `USAGE_RETENTION_DAYS` after its last count. See libs/store/src/workspaces/usage.ts.
   */
  deviceDayUsage: (deviceId: string, day: string) => `${device(deviceId)}:day-usage:${day.slice(0, 10)}`,

  // --- the console: a workspace's users (docs/workspaces.md "The console"; hash tag {cu:<user>}) --
  /**
   * Hash: a console user's record, found by its login name (unique in the install): `user`,
   * `workspace`, `role` (admin | agent), `password` (the scrypt hash with its parameters:
   * `scrypt$<log2 N>$<r>$<p>$<salt>$<key>`, never the password), `stamp` (drawn again by every
   * change of its password or role: a session signed in before is no longer its), `createdAt`,
   * `updatedAt`. See libs/store/src/workspaces/console-users.ts.
   */
  consoleUser: (user: string) => `${consoleUser(user)}:def`,
  /**
   * Set: the SHA-256s of the user's admin sessions (`adminSession`), so that deleting the user or
   * changing its password or role ends them all at once; expires with the newest of them.
   */
  consoleUserSessions: (user: string) => `${consoleUser(user)}:sessions`,
  /** Set: the login names of a workspace's console users (its Users page). */
  workspaceUsers: (workspaceId: string) => `${workspace(workspaceId)}:users`,
} as const;

/**
 * A command published on `keys.connectionCommands()` for the replica that pairs `deviceId` (only
 * the pairing with `pairingId`: a newer one of the same device is left alone):
 * - `cancel-pairing`: end it;
 * - `passkey-assertion`: hand its passkey request the operator's assertion (`sealed`: the
 *   assertion's JSON sealed under `passkeyCommandContext(requestId)`);
 * - `passkey-confirm`: the operator compared `code` with the phone's.
 * A passkey command is answered on `keys.commandReply(requestId)` (a `DeviceCommandReply`,
 * device-commands.ts).
 */
export type ConnectionCommand =
  | { type: 'cancel-pairing'; deviceId: string; pairingId: string; reason: string }
  | { type: 'passkey-assertion'; deviceId: string; pairingId: string; requestId: string; sealed: string }
  | { type: 'passkey-confirm'; deviceId: string; pairingId: string; requestId: string; code: string };

/** The sealing context of a passkey command's assertion (bound to its request). */
export const passkeyCommandContext = (requestId: string) => `passkey-assertion:${requestId}`;
