/**
 * What other features use of the messages capability: a record's edits and deletes, and the
 * contact it is to or from (the admin Messages page shows records as GET /messages/:id does), and
 * the record's OpenAPI schema (a chat's messages extend it).
 */
export { withContacts } from './record-contacts.js';
export { withRevisions } from './revised-record.js';
export { messageSchemas } from './openapi.js';
export { recordFromFields, type AnyRecord } from './records.js';
export { ownMessage } from './own-message.js';
