import type { INodeProperties } from 'n8n-workflow';

export const show = (resource: string, operations: string[]) => ({
  show: { resource: [resource], operation: operations },
});

/** Options of a collection in the order n8n's lint wants: by display name. */
export const byName = (options: INodeProperties[]): INodeProperties[] =>
  [...options].sort((a, b) => a.displayName.localeCompare(b.displayName));

/** The name of the input item's binary field a file is read from (sendMedia, a status). */
export const binaryField = (displayOptions: INodeProperties['displayOptions']): INodeProperties => ({
  displayName: 'Input Binary Field',
  name: 'binaryPropertyName',
  type: 'string',
  required: true,
  default: 'data',
  description: 'The name of the input binary field holding the file',
  displayOptions,
});

/** A file's URL, which the gateway downloads through its guarded client (sendMedia, a status). */
export const urlField = (displayOptions: INodeProperties['displayOptions']): INodeProperties => ({
  displayName: 'URL',
  name: 'url',
  type: 'string',
  required: true,
  default: '',
  placeholder: 'e.g. https://example.com/menu.jpg',
  description: 'An http(s) URL the gateway downloads (private and loopback addresses are refused)',
  displayOptions,
});

export const MEDIA_TYPES = [
  { name: 'Audio', value: 'audio' },
  { name: 'Document', value: 'document' },
  { name: 'Image', value: 'image' },
  { name: 'Sticker', value: 'sticker' },
  { name: 'Video', value: 'video' },
];

/** The Options every send takes (each maps to a field of POST /send, or the Idempotency-Key header). */
export const sendOptions: INodeProperties[] = [
  {
    displayName: 'Idempotency Key',
    name: 'idempotencyKey',
    type: 'string',
    default: '',
    description:
      'A key (1–255 printable ASCII characters) that makes a retried request answer the first one instead of sending again, for 24 hours',
  },
  {
    displayName: 'Link Preview',
    name: 'linkPreview',
    type: 'boolean',
    default: true,
    description: 'Whether a text with a URL carries a preview of its first URL',
  },
  {
    displayName: 'Reply To',
    name: 'replyTo',
    type: 'string',
    default: '',
    description:
      'The message ID this message quotes: of a message this device sent (from a send), or of one a contact wrote (messageId of a Message Received event)',
  },
  {
    displayName: 'Send At',
    name: 'sendAt',
    type: 'dateTime',
    default: '',
    description: 'Hold the message until then (at most 30 days ahead)',
  },
];

/** The recipient of a send (a template's may be several: its own description says how). */
export const to = (
  operations: string[],
  description = "A phone number in international format, digits only (15551234567), a contact's LID (…@lid), a WhatsApp username (@alice.shop) or a group ID (…@g.us)",
): INodeProperties => ({
  displayName: 'To',
  name: 'to',
  type: 'string',
  required: true,
  default: '',
  placeholder: 'e.g. 15551234567',
  description,
  displayOptions: show('message', operations),
});

export const messageFields: INodeProperties[] = [
  to(['sendText', 'sendMedia']),
  {
    displayName: 'Text',
    name: 'text',
    type: 'string',
    typeOptions: { rows: 4 },
    required: true,
    default: '',
    description: 'The message, at most 65,536 characters',
    displayOptions: show('message', ['sendText', 'sendToList']),
  },
  {
    displayName: 'Recipients',
    name: 'recipients',
    type: 'string',
    typeOptions: { rows: 3 },
    required: true,
    default: '',
    placeholder: 'e.g. 15551234567, 15557654321',
    description:
      'Phone numbers (or LIDs, or WhatsApp usernames such as @alice.shop) separated by commas, spaces or line breaks, or an expression giving an array; each at most once',
    displayOptions: show('message', ['sendToList']),
  },
  {
    displayName: 'Media Type',
    name: 'mediaType',
    type: 'options',
    options: MEDIA_TYPES,
    default: 'image',
    description: 'The kind of WhatsApp message the file is sent as',
    displayOptions: show('message', ['sendMedia']),
  },
  {
    displayName: 'Source',
    name: 'source',
    type: 'options',
    options: [
      {
        name: 'Binary Field',
        value: 'binary',
        description: "A file of the input item, sent inline (base64) in the request's JSON",
      },
      {
        name: 'Media ID',
        value: 'mediaId',
        description: 'A file uploaded to the gateway before (POST /media)',
      },
      { name: 'URL', value: 'url', description: 'A public http(s) URL the gateway downloads' },
    ],
    default: 'binary',
    description: 'Where the file comes from (at most 10 MiB)',
    displayOptions: show('message', ['sendMedia']),
  },
  binaryField({ show: { resource: ['message'], operation: ['sendMedia'], source: ['binary'] } }),
  urlField({ show: { resource: ['message'], operation: ['sendMedia'], source: ['url'] } }),
  {
    displayName: 'Media ID',
    name: 'mediaId',
    type: 'string',
    required: true,
    default: '',
    placeholder: 'e.g. med_…',
    description: 'The ID POST /media answered for a file of this device',
    displayOptions: { show: { resource: ['message'], operation: ['sendMedia'], source: ['mediaId'] } },
  },
  {
    displayName: 'Caption',
    name: 'caption',
    type: 'string',
    default: '',
    description: 'Text shown with the media, at most 1,024 characters',
    displayOptions: show('message', ['sendMedia']),
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    displayOptions: show('message', ['sendMedia']),
    options: byName([
      {
        displayName: 'File Name',
        name: 'fileName',
        type: 'string',
        default: '',
        description: "The file's name as the contact sees it (default: the binary field's)",
      },
      ...sendOptions.filter((o) => o.name !== 'linkPreview'),
      {
        displayName: 'MIME Type',
        name: 'mimeType',
        type: 'string',
        default: '',
        placeholder: 'e.g. application/pdf',
        description: "The file's MIME type (default: the binary field's, or what the gateway detects)",
      },
    ]),
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    displayOptions: show('message', ['sendText']),
    options: sendOptions,
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add option',
    default: {},
    displayOptions: show('message', ['sendToList']),
    options: byName([
      ...sendOptions,
      {
        displayName: 'Media Type',
        name: 'mediaType',
        type: 'options',
        options: MEDIA_TYPES,
        default: 'image',
        description: 'The kind of message the media URL is sent as; the text goes with it',
      },
      {
        displayName: 'Media URL',
        name: 'mediaUrl',
        type: 'string',
        default: '',
        description: 'An http(s) URL of a file sent to everyone with the text',
      },
    ]),
  },
  {
    displayName: 'Message ID',
    name: 'messageId',
    type: 'string',
    required: true,
    default: '',
    description: 'Our message ID (from a send, a list or a trigger event)',
    displayOptions: show('message', ['get', 'markRead']),
  },
];
