/**
 * What other features use of the send capability: its use case and its answer, which the admin
 * Chats page's reply is (features/chats/admin.ts: a /send to the chat), and its body limit.
 */
export { SEND_BODY_LIMIT_BYTES, sendAnswer } from './mount.js';
export { sendMessage, type SendOutcome } from './send-message.js';
// A message's content from a send body, its time, an uploaded attachment, a key's ids (statuses,
// channels, otp), and the edit or delete of a sent message (statuses, channels).
export { contentOf, dueAt, idsOf, withUploadedMedia, type SendDeps } from './send-message.js';
export { reviseMessage, type ReviseDeps } from './revise-message.js';
// A pool token's send (features/pools/pool-send.ts): a list's personal fields, an attachment's size.
export { personalisation } from './send-message.js';
export { attachmentTooLarge } from './attachment-size.js';
