/**
 * @mgw/store: the product's Redis records, one folder per capability. Each script they run is a
 * `.lua` file of `../lua/` (see `lua.ts`).
 */
export * from './config.js';

// Messages: records, their index, content, inbound messages, revisions and kinds, the accept script.
export * from './messages/message-store.js';
export * from './messages/message-retries.js';
export * from './messages/message-index.js';
export * from './messages/content-store.js';
export * from './messages/history-store.js';
export * from './messages/inbound-store.js';
export * from './messages/message-revisions.js';
export * from './messages/message-kinds-store.js';
export * from './messages/message-accept.js';
export * from './messages/lua-pack.js';
export * from './messages/staged-writes.js';

// Broadcasts: status updates beside their messages (audience, views).
export * from './broadcasts/status-store.js';
export * from './broadcasts/status-settings.js';
export * from './broadcasts/channel-list.js';

// Batches: records, pause/resume/cancel, the sweep that finishes them.
export * from './batches/batch-store.js';
export * from './batches/batch-control.js';
export * from './batches/batch-sweep.js';

// Devices: session and state, commands to their sender, activity, pairing and disconnects.
export * from './devices/session-store.js';
export * from './devices/device-state.js';
export * from './devices/device-commands.js';
export * from './devices/device-activity.js';
export * from './devices/pairing-record.js';
export * from './devices/disconnect-marker.js';
export * from './devices/device-proxy.js';
export * from './devices/cloud-device.js';

// Contacts: lookups and the phone <-> LID identities; opt-outs; the sending policy.
export * from './contacts/contact-cache.js';
export * from './contacts/contact-identities.js';
export * from './contacts/contact-usernames.js';
export * from './contacts/blocklist.js';
export * from './opt-outs/index.js';
export * from './policy/index.js';

// Send queues, BullMQ behind one door.
export * from './queues/send-queues.js';
export * from './queues/bullmq-door.js';
export * from './queues/queue-telemetry.js';
export * from './queues/device-text.js';

// Events: publishing one (to the device's event log, and to its webhook's outbox when wanted).
export * from './events/event-publish.js';

// Webhooks: settings, deliveries from the events outbox.
export * from './webhooks/webhook-store.js';
export * from './webhooks/webhook-deliveries.js';
// What a device's ways out did lately (the dashboard's Events tab), and "retry now".
export * from './webhooks/webhook-report.js';

// The event log: every event of a device, retained for GET /events.
export * from './events/event-log.js';
// The broker relay's cursors and leases, and the devices' broker settings.
export * from './events/broker-relay-state.js';
export * from './events/broker-settings.js';

// Pools: named sets of devices one batch is spread over (their definitions).
export * from './pools/pool-store.js';

// Workspaces: the operator's customers and what each owns (docs/workspaces.md).
export * from './workspaces/workspace-store.js';
export * from './workspaces/suspended-workspaces.js';
export * from './workspaces/usage.js';
export * from './workspaces/workspace-quota.js';
export * from './workspaces/console-users.js';

// Access: API tokens, failed sign-ins, rate limits.
export * from './access/token-store.js';
export * from './access/auth-failures.js';
export * from './access/rate-limits.js';
export * from './access/idempotency-records.js';

// Coordination: leases with fencing, interval locks, liveness, the roster of senders.
export * from './coordination/index.js';
export * from './coordination/sender-roster.js';
export * from './coordination/connect-bucket.js';

// Encryption at rest.
export * from './encryption/index.js';
export * from './encryption/sealer.js';

// Pools: batches spread over several devices, and the moves of their messages.
export * from './pools/pool-batches.js';
export * from './pools/pool-moves.js';

// Media: objects uploaded once (POST /media) and inbound attachments kept on arrival, in Redis or S3.
export * from './media/media-config.js';
export * from './media/media-backend.js';
export * from './media/media-store.js';
export * from './media/media-settings.js';
// Chats: the device's chat index (GET /chats) and its account settings (calls, reading).
export * from './chats/chat-index.js';
export * from './chats/account-settings.js';
// Labels: the account's WhatsApp Business labels as the device learned them (GET /labels).
export * from './labels/label-store.js';
