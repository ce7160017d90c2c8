/** Kept free of DOM code: the browser tests import it to compare the list with libs/contracts. */

/** The events a webhook can ask for: the same list as EVENT_TYPES in libs/contracts (a test checks). */
export const WEBHOOK_EVENTS = [
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.received',
  'session.status',
  'batch.completed',
  'contact.opted_out',
  'contact.opted_in',
  'batch.paused',
  'batch.resumed',
  'batch.cancelled',
  'message.edited',
  'message.deleted',
  'message.reaction',
  'poll.vote',
  'batch.recipients_moved',
  'message.undecryptable',
  'presence.update',
  'status.viewed',
  'status.received',
  // a post in a channel the device follows (docs/channels.md)
  'channel.message',
  'call.received',
  'call.missed',
  'call.ended',
  // a group's subject, description, settings or members changed (docs/groups.md)
  'group.updated',
  // WhatsApp Business labels, from app-state sync (docs/labels.md)
  'label.edited',
  'label.association',
  // a chat archived, pinned or muted (docs/labels.md)
  'chat.updated',
] as const;
