import type { INodeProperties } from 'n8n-workflow';
import { messageFields } from './message-fields';
import { otherFields } from './other-fields';
import { templateFields } from './template-fields';
import { DEVICE_ID } from './transport';

const operation = (
  resource: string,
  fallback: string,
  options: INodeProperties['options'],
): INodeProperties => ({
  displayName: 'Operation',
  name: 'operation',
  type: 'options',
  noDataExpression: true,
  displayOptions: { show: { resource: [resource] } },
  options,
  default: fallback,
});

/**
 * Resource, then operation, the Device ID (every operation's), then each operation's fields
 * (message-fields.ts, template-fields.ts, other-fields.ts).
 */
export const properties: INodeProperties[] = [
  {
    displayName: 'Resource',
    name: 'resource',
    type: 'options',
    noDataExpression: true,
    options: [
      { name: 'Batch', value: 'batch' },
      { name: 'Chat', value: 'chat' },
      { name: 'Connection', value: 'connection' },
      { name: 'Contact', value: 'contact' },
      { name: 'Group', value: 'group' },
      { name: 'Label', value: 'label' },
      { name: 'Message', value: 'message' },
      { name: 'OTP', value: 'otp' },
      { name: 'Status', value: 'status' },
    ],
    default: 'message',
  },
  operation('message', 'sendText', [
    {
      name: 'Get',
      value: 'get',
      description: 'Read a message record: its status, times, failure reason',
      action: 'Get a message',
    },
    {
      name: 'Mark as Read',
      value: 'markRead',
      description: 'Send the read receipt of a message a contact wrote (and of the unread ones before it)',
      action: 'Mark a message as read',
    },
    {
      name: 'Send Media',
      value: 'sendMedia',
      description:
        'Send an image, video, audio, document or sticker from a binary field, a URL or a media ID',
      action: 'Send media',
    },
    {
      name: 'Send Template',
      value: 'sendTemplate',
      description:
        'Send an approved WhatsApp template with its parameters (Cloud API devices): the only message a contact who has not written in 24 hours may get',
      action: 'Send a template',
    },
    {
      name: 'Send Text',
      value: 'sendText',
      description: 'Send a text to one number, LID or group',
      action: 'Send a text',
    },
    {
      name: 'Send to List',
      value: 'sendToList',
      description: 'Send one text (and media) to a list of numbers in one request: a batch',
      action: 'Send to a list',
    },
  ]),
  operation('otp', 'send', [
    {
      name: 'Send',
      value: 'send',
      description: 'Send a one-time password; the answer comes once it was sent',
      action: 'Send an OTP',
    },
  ]),
  operation('contact', 'check', [
    {
      name: 'Check Numbers',
      value: 'check',
      description: 'Ask WhatsApp which numbers have an account (one item per number)',
      action: 'Check numbers',
    },
    {
      name: 'Resolve Username',
      value: 'resolveUsername',
      description:
        'Ask WhatsApp who has a @username (with its PIN when it has one): found, pin_required or not_found',
      action: 'Resolve a username',
    },
  ]),
  operation('batch', 'get', [
    {
      name: 'Get',
      value: 'get',
      description: 'Read the progress of a list: counts per status, state',
      action: 'Get a batch',
    },
  ]),
  operation('connection', 'getStatus', [
    {
      name: 'Get Status',
      value: 'getStatus',
      description: "Read the device's connection status and sending usage",
      action: 'Get the connection status',
    },
  ]),
  operation('group', 'getAll', [
    {
      name: 'Get Many',
      value: 'getAll',
      description: "List the account's groups (one item per group)",
      action: 'Get many groups',
    },
    {
      name: 'Send Text',
      value: 'send',
      description: 'Send a text to a group, with mentions',
      action: 'Send a text to a group',
    },
  ]),
  operation('label', 'getAll', [
    {
      name: 'Add to Chat',
      value: 'addToChat',
      description: 'Put a label on a chat',
      action: 'Add a label to a chat',
    },
    {
      name: 'Get Many',
      value: 'getAll',
      description: "List the account's labels (one item per label)",
      action: 'Get many labels',
    },
    {
      name: 'Remove From Chat',
      value: 'removeFromChat',
      description: 'Take a label off a chat',
      action: 'Remove a label from a chat',
    },
  ]),
  operation('chat', 'markRead', [
    {
      name: 'Mark as Read',
      value: 'markRead',
      description: "Send the read receipts of a chat's unread messages",
      action: 'Mark a chat as read',
    },
  ]),
  operation('status', 'post', [
    {
      name: 'Post',
      value: 'post',
      description: 'Post a status update (story) to contacts',
      action: 'Post a status',
    },
  ]),
  {
    displayName: 'Device ID',
    name: DEVICE_ID,
    type: 'string',
    default: '',
    placeholder: 'e.g. d0123456789abcdef',
    description:
      "For a workspace token: the device this node acts on, overriding the credential's Device ID (an expression may name another device for each item). Leave empty to use the credential's.",
  },
  ...messageFields,
  ...templateFields,
  ...otherFields,
];
