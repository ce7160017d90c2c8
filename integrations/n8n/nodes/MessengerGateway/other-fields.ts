import type { INodeProperties } from 'n8n-workflow';
import { binaryField, byName, sendOptions, show, urlField } from './message-fields';

const idempotencyOption = sendOptions.filter((o) => o.name === 'idempotencyKey');

const chatId = (resource: string, operations: string[]): INodeProperties => ({
  displayName: 'Chat ID',
  name: 'chatId',
  type: 'string',
  required: true,
  default: '',
  placeholder: 'e.g. 15551234567',
  description: 'A phone number, a LID (…@lid) or a group ID (…@g.us)',
  displayOptions: show(resource, operations),
});

const FONTS = [
  'calistoga',
  'courierprime',
  'exo2',
  'fb_script',
  'morningbreeze',
  'system',
  'system_bold',
  'system_text',
].map((font) => ({ name: font, value: font }));

const statusMedia = (extra: Record<string, string[]> = {}) => ({
  show: { resource: ['status'], operation: ['post'], kind: ['media'], ...extra },
});

export const otherFields: INodeProperties[] = [
  // OTP: send
  {
    displayName: 'Phone',
    name: 'phone',
    type: 'string',
    required: true,
    default: '',
    placeholder: 'e.g. 15551234567',
    description: 'The phone number in international format, digits only',
    displayOptions: show('otp', ['send']),
  },
  {
    displayName: 'Code',
    name: 'code',
    type: 'string',
    typeOptions: { password: true },
    required: true,
    default: '',
    description: 'The code, 4 to 8 digits (sent in bold at the start of the template)',
    displayOptions: show('otp', ['send']),
  },
  {
    displayName: 'Language',
    name: 'language',
    type: 'options',
    options: [
      { name: 'Arabic', value: 'Arabic' },
      { name: 'English', value: 'English' },
    ],
    default: 'English',
    description: "The template's language",
    displayOptions: show('otp', ['send']),
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    displayOptions: show('otp', ['send']),
    options: idempotencyOption,
  },

  // Contact: check numbers
  {
    displayName: 'Phones',
    name: 'phones',
    type: 'string',
    typeOptions: { rows: 3 },
    required: true,
    default: '',
    placeholder: 'e.g. 15551234567, 15557654321',
    description:
      'Up to 1,000 numbers separated by commas, spaces or line breaks, or an expression giving an array',
    displayOptions: show('contact', ['check']),
  },

  // Contact: resolve a username
  {
    displayName: 'Username',
    name: 'username',
    type: 'string',
    required: true,
    default: '',
    placeholder: 'e.g. @alice.shop',
    description:
      "A WhatsApp username, with or without @ (3 to 35 of a-z, 0-9, _ and .). Once found, it may be a send's To (@alice.shop).",
    displayOptions: show('contact', ['resolveUsername']),
  },
  {
    displayName: 'PIN',
    name: 'pin',
    type: 'string',
    typeOptions: { password: true },
    default: '',
    description: "The username's 4-digit key, for a username guarded by one (leave empty otherwise)",
    displayOptions: show('contact', ['resolveUsername']),
  },

  // Batch: get
  {
    displayName: 'Batch ID',
    name: 'batchId',
    type: 'string',
    required: true,
    default: '',
    description: 'The batch ID a Send to List answered',
    displayOptions: show('batch', ['get']),
  },

  // Group: send
  {
    displayName: 'Group ID',
    name: 'groupId',
    type: 'string',
    required: true,
    default: '',
    placeholder: 'e.g. 120363025246125486@g.us',
    description: "The group's ID (from Get Many, or a trigger event's chat.ID)",
    displayOptions: show('group', ['send']),
  },
  {
    displayName: 'Text',
    name: 'text',
    type: 'string',
    typeOptions: { rows: 4 },
    required: true,
    default: '',
    description: 'The message; write @ and the number where a mentioned member should show (@15551234567)',
    displayOptions: show('group', ['send']),
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    displayOptions: show('group', ['send']),
    options: byName([
      ...sendOptions,
      {
        displayName: 'Mentions',
        name: 'mentions',
        type: 'string',
        default: '',
        description: 'Members to mention (phone numbers or LIDs), separated by commas',
      },
    ]),
  },

  // Label: add to / remove from a chat; Chat: mark read
  chatId('label', ['addToChat', 'removeFromChat']),
  {
    displayName: 'Label ID',
    name: 'labelId',
    type: 'string',
    required: true,
    default: '',
    description: "The label's ID (from Get Many)",
    displayOptions: show('label', ['addToChat', 'removeFromChat']),
  },
  chatId('chat', ['markRead']),

  // Status: post
  {
    displayName: 'Kind',
    name: 'kind',
    type: 'options',
    options: [
      { name: 'Media', value: 'media' },
      { name: 'Text', value: 'text' },
    ],
    default: 'text',
    description: 'A text on a coloured background, or an image, video or voice note',
    displayOptions: show('status', ['post']),
  },
  {
    displayName: 'Text',
    name: 'text',
    type: 'string',
    typeOptions: { rows: 3 },
    required: true,
    default: '',
    description: 'The status text, at most 700 characters',
    displayOptions: { show: { resource: ['status'], operation: ['post'], kind: ['text'] } },
  },
  {
    displayName: 'Media Type',
    name: 'mediaType',
    type: 'options',
    options: [
      { name: 'Audio', value: 'audio' },
      { name: 'Image', value: 'image' },
      { name: 'Video', value: 'video' },
    ],
    default: 'image',
    displayOptions: statusMedia(),
  },
  {
    displayName: 'Source',
    name: 'source',
    type: 'options',
    options: [
      { name: 'Binary Field', value: 'binary' },
      { name: 'URL', value: 'url' },
    ],
    default: 'binary',
    description: 'Where the file comes from (at most 10 MiB)',
    displayOptions: statusMedia(),
  },
  binaryField(statusMedia({ source: ['binary'] })),
  urlField(statusMedia({ source: ['url'] })),
  {
    displayName: 'Caption',
    name: 'caption',
    type: 'string',
    default: '',
    displayOptions: statusMedia(),
  },
  {
    displayName: 'Audience',
    name: 'audienceMode',
    type: 'options',
    options: [
      { name: 'All Contacts', value: 'contacts', description: 'Everyone the account has a chat with' },
      { name: 'List', value: 'list', description: 'The numbers below' },
    ],
    default: 'contacts',
    description: 'Who sees the status',
    displayOptions: show('status', ['post']),
  },
  {
    displayName: 'Audience List',
    name: 'audience',
    type: 'string',
    typeOptions: { rows: 3 },
    required: true,
    default: '',
    description: 'Up to 5,000 numbers or LIDs, separated by commas, spaces or line breaks',
    displayOptions: { show: { resource: ['status'], operation: ['post'], audienceMode: ['list'] } },
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    displayOptions: show('status', ['post']),
    options: [
      {
        displayName: 'Background Color',
        name: 'backgroundColor',
        type: 'color',
        default: '',
        description: 'A text status background, #RRGGBB',
      },
      {
        displayName: 'Font',
        name: 'font',
        type: 'options',
        options: FONTS,
        default: 'system',
        description: "A text status's font",
      },
      ...sendOptions.filter((o) => o.name === 'idempotencyKey' || o.name === 'sendAt'),
    ],
  },
];
