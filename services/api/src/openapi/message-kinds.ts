import { KIND_LIMITS } from '@mgw/contracts';
import type { JsonSchema } from './joi-schema.js';
import { closed, str } from './schema-helpers.js';

/** Message kinds in the OpenAPI document: the fields a record shows (docs/message-kinds.md). */

/** A contact's identity: the one `ContactIdentity` component (openapi/groups.ts). */
const contactIdentity: JsonSchema = { $ref: '#/components/schemas/ContactIdentity' };

const location = closed(
  {
    latitude: { type: 'number', minimum: -90, maximum: 90 },
    longitude: { type: 'number', minimum: -180, maximum: 180 },
    name: str('The place name.'),
    address: str('Its address.'),
  },
  ['latitude', 'longitude'],
);

const contacts: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: KIND_LIMITS.contacts,
  items: closed(
    {
      name: str('The name on the card (vCard FN).'),
      phones: {
        type: 'array',
        items: { type: 'string' },
        description: 'Numbers (digits; vCard TEL with waid).',
      },
      email: str('vCard EMAIL.'),
      organization: str('vCard ORG.'),
    },
    ['name', 'phones'],
  ),
};

/** The properties a message record (GET /messages/{id}) adds for a message kind. */
export const messageKindProperties: Record<string, JsonSchema> = {
  reaction: {
    ...closed(
      {
        messageId: str('Our messageId of the message reacted to.'),
        emoji: str('The emoji; `""` removed it.'),
      },
      ['messageId', 'emoji'],
    ),
    description: 'Outbound: the reaction sent, as requested.',
  },
  location: { ...location, description: 'The location sent (outbound) or shared by the contact (inbound).' },
  contacts: {
    ...contacts,
    description:
      'The contact cards sent (we build their vCards) or shared by the contact (read from their vCards).',
  },
  poll: {
    ...closed(
      {
        question: str('The question.'),
        options: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 12 },
        multiple: { type: 'boolean', description: 'More than one option may be chosen.' },
        tally: {
          type: 'array',
          description: "Votes per option (each contact's latest vote), in the options' order.",
          items: closed({ option: { type: 'string' }, votes: { type: 'integer', minimum: 0 } }, [
            'option',
            'votes',
          ]),
        },
        votes: {
          type: 'array',
          description: "Each contact's latest vote (`options: []`: it withdrew it).",
          items: closed(
            {
              contact: contactIdentity,
              options: { type: 'array', items: { type: 'string' } },
              at: { type: 'string', format: 'date-time' },
            },
            ['contact', 'options', 'at'],
          ),
        },
      },
      ['question', 'options', 'multiple', 'tally', 'votes'],
    ),
    description: 'Outbound: the poll sent, with its decrypted votes and tally.',
  },
  template: {
    ...closed(
      {
        name: str("The template's name in the number's WhatsApp Business Account."),
        language: str('Its language code (`en_US`, `ar`).'),
        components: {
          type: 'array',
          description:
            "The components' parameters as sent, in the Graph API's shape (absent on an OTP's record: they are the code).",
          items: { type: 'object' },
        },
      },
      ['name', 'language'],
    ),
    description: 'Outbound, Cloud API devices: the template sent.',
  },
  reactions: {
    type: 'array',
    description:
      "Reactions contacts put on this message (each contact's current one; a removed one is gone).",
    items: closed(
      {
        contact: contactIdentity,
        emoji: { type: 'string' },
        at: { type: 'string', format: 'date-time' },
      },
      ['contact', 'emoji', 'at'],
    ),
  },
};

/** The /send operation's paragraph on the kinds (the request fields come from the joi schema). */
export const MESSAGE_KINDS_DESCRIPTION =
  '\n\n**Message kinds (Choice):** instead of `text`/`attachment`, exactly one of `reaction` `{ messageId, emoji }` (our messageId of a message we sent or received, in the chat of `to` — one number; `emoji: ""` removes it; 404 for a messageId that is no message of the device, 409 when that message failed), `location` `{ latitude, longitude, name?, address? }`, `contacts` (1–10 cards `{ name, phones, email?, organization? }`; the gateway builds the vCards, escaping every special character), `poll` `{ question, options (2–12, distinct), multiple? }`. GET /messages/{id} shows the same field, and a poll its decrypted `tally` and `votes`. See docs/message-kinds.md.';
