import type { INodePropertyOptions } from 'n8n-workflow';
import type { Body } from '../MessengerGateway/transport';

/** An event type the gateway's webhook can send (PUT /webhook `events`, from the API's document). */
export type WebhookEvent = NonNullable<Body<'/webhook', 'put'>['events']>[number];

/**
 * Every event type, named for the UI. A Record over the document's enum: a type the API adds (or
 * drops) fails the build until it is listed here.
 */
const EVENT_NAMES: Record<WebhookEvent, [name: string, description: string]> = {
  'message.received': ['Message Received', 'A contact (or a group member) wrote to the account'],
  'message.sent': ['Message Sent', 'WhatsApp accepted one of our messages'],
  'message.delivered': ['Message Delivered', "One of our messages reached the contact's phone"],
  'message.read': ['Message Read', 'The contact read one of our messages'],
  'message.failed': ['Message Failed', 'One of our messages failed for good, with a reason'],
  'message.edited': ['Message Edited', 'A text was edited (by us or by the contact)'],
  'message.deleted': ['Message Deleted', 'A message was deleted for everyone'],
  'message.reaction': ['Message Reaction', 'A contact reacted to a message'],
  'message.undecryptable': [
    'Message Undecryptable',
    "The recipient's phone could not decrypt one of our messages",
  ],
  'poll.vote': ['Poll Vote', 'A contact voted on one of our polls'],
  'session.status': ['Session Status', 'The device connected, disconnected, or its sending paused'],
  'batch.completed': ['Batch Completed', 'Every message of a list left the queue'],
  'batch.paused': ['Batch Paused', 'A list was paused'],
  'batch.resumed': ['Batch Resumed', 'A list was resumed'],
  'batch.cancelled': ['Batch Cancelled', 'A list was cancelled'],
  'batch.recipients_moved': ['Batch Recipients Moved', "A pooled list's messages moved to another device"],
  'contact.opted_out': ['Contact Opted Out', "A number joined the device's suppression list"],
  'contact.opted_in': ['Contact Opted In', 'A number left the suppression list'],
  'presence.update': ['Presence Update', 'A subscribed contact came online, went offline or is typing'],
  'status.viewed': ['Status Viewed', 'A viewer opened one of our status updates'],
  'status.received': ['Status Received', 'A contact posted a status update'],
  'channel.message': ['Channel Message', 'A followed channel posted'],
  'call.received': ['Call Received', 'A contact is calling the account'],
  'call.missed': ['Call Missed', 'A call ended unanswered (or rejected)'],
  'call.ended': ['Call Ended', 'A call answered elsewhere ended'],
  'group.updated': ['Group Updated', "A group's subject, settings or members changed"],
  'label.edited': ['Label Edited', 'A label was created, renamed, recoloured or deleted'],
  'label.association': ['Label Association', 'A chat got or lost a label'],
  'chat.updated': ['Chat Updated', 'A chat was archived, pinned or muted (or undone)'],
};

export const EVENT_TYPES = Object.keys(EVENT_NAMES) as WebhookEvent[];

export const EVENT_OPTIONS: INodePropertyOptions[] = EVENT_TYPES.map((value) => ({
  name: EVENT_NAMES[value][0],
  value,
  description: `${EVENT_NAMES[value][1]} (${value})`,
})).sort((a, b) => a.name.localeCompare(b.name));
