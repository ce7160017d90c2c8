/**
 * What a WhatsApp user's messages look like in the `messages` webhook, one builder per form Meta's
 * reference allows (each cites its page under
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages).
 * Every builder answers the change's `value`: `contacts[]` (the user's profile) and `messages[]`
 * (one message). Since 2026 both name the user by their business-scoped user ID too (`user_id`,
 * `from_user_id`), and by their username when they adopted one; a user whose phone number is not
 * shared is named by those alone (https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids).
 */
import { displayDigits, seconds, type FormContext, type FormUser } from './context.js';

type Json = Record<string, unknown>;
export type UserValue = { contacts?: Json[]; messages: Json[] };

/** How the user's `contacts[]` entry is written: with or without their phone and profile name. */
export interface ContactShape {
  phone?: boolean;
  name?: boolean;
}

/**
 * The user's `contacts[]` entry: `profile.name` (their display name), `profile.username` (only
 * when they adopted one), `wa_id` (omitted when their phone number is not shared) and `user_id`
 * (their BSUID). Reference: the `contacts` object of every incoming message page, e.g.
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/image
 */
export function contactOf(user: FormUser, shape: ContactShape = {}): Json {
  const profile = {
    ...(shape.name !== false ? { name: user.name } : {}),
    ...(user.username ? { username: user.username } : {}),
  };
  return {
    ...(Object.keys(profile).length ? { profile } : {}),
    ...(shape.phone !== false ? { wa_id: user.waId } : {}),
    user_id: user.userId,
  };
}

/**
 * A message of the user: `from` (their phone; omitted when not shared), `from_user_id` (their
 * BSUID), `id`, `timestamp`, `type` and the object named after the type.
 */
export function userMessage(
  ctx: FormContext,
  type: string,
  content: Json | undefined,
  extra: Json = {},
  shape: ContactShape = {},
): Json {
  return {
    ...(shape.phone !== false ? { from: ctx.user.waId } : {}),
    from_user_id: ctx.user.userId,
    id: ctx.wamid(),
    timestamp: seconds(ctx.at),
    type,
    ...(content !== undefined ? { [type]: content } : {}),
    ...extra,
  };
}

/** The value of one user message with their contact entry. */
export const userValue = (ctx: FormContext, message: Json, shape: ContactShape = {}): UserValue => ({
  contacts: [contactOf(ctx.user, shape)],
  messages: [message],
});

/** `context` of a reply: the business number and the message the user answered. */
const replyContext = (ctx: FormContext): Json => ({
  context: { from: displayDigits(ctx.number), id: ctx.target.wamid },
});

// ---- text (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text) ---------------------------------------------------------------------

/** A text: `text.body`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export const text = (ctx: FormContext, bodyText = 'Does it come in another color?', extra: Json = {}) =>
  userValue(ctx, userMessage(ctx, 'text', { body: bodyText }, extra));

/** A text whose `contacts[]` entry has no profile name (a user who set none). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export const textWithoutProfileName = (ctx: FormContext) =>
  userValue(ctx, userMessage(ctx, 'text', { body: 'No name on my profile' }), { name: false });

/** A text with no `contacts[]` array at all (older payloads; system messages never have one). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export const textWithoutContacts = (ctx: FormContext): UserValue => ({
  messages: [userMessage(ctx, 'text', { body: 'No contacts array' })],
});

/** A reply: `context.from` (the business number) and `context.id` (the message answered). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export const textReply = (ctx: FormContext) => text(ctx, 'Yes, that one', replyContext(ctx));

/** A forwarded text: `context.forwarded: true`, no id. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export const textForwarded = (ctx: FormContext) =>
  text(ctx, 'Look at this', { context: { forwarded: true } });

/** A text forwarded many times: `context.frequently_forwarded: true`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export const textFrequentlyForwarded = (ctx: FormContext) =>
  text(ctx, 'Chain letter', { context: { forwarded: true, frequently_forwarded: true } });

/**
 * A text sent from a Click to WhatsApp ad: `referral` (source_url, source_id, source_type,
 * headline, body, media_type, image_url, ctwa_clid, welcome_message). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 */
export const textFromAd = (ctx: FormContext) =>
  text(ctx, 'Is this still available?', {
    referral: {
      source_url: 'https://fb.me/3cr4Wqqkv',
      source_id: '120226305854810726',
      source_type: 'ad',
      body: 'Aloe vera plants, 20% off this week',
      headline: 'Chat with us',
      media_type: 'image',
      image_url: 'https://scontent.xx.fbcdn.net/v/t45.1600-4/aloe.png',
      ctwa_clid: 'ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-Zab',
      welcome_message: { text: 'Hi! How can we help?' },
    },
  });

/** A product inquiry: a text whose `context.referred_product` names a catalog item. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export const textProductInquiry = (ctx: FormContext) =>
  text(ctx, 'Do you have it in blue?', {
    context: {
      from: displayDigits(ctx.number),
      id: ctx.target.wamid,
      referred_product: { catalog_id: '194836987003835', product_retailer_id: 'di9ozbzfi4' },
    },
  });

/**
 * A text from a user whose identity changed while the business enabled the identity change check:
 * `contacts[].identity_key_hash`, and the message's `identity` (acknowledged, created_timestamp,
 * hash) of earlier payloads. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 */
export function textWithIdentity(ctx: FormContext): UserValue {
  const value = text(ctx, 'New phone, same me', {
    identity: { acknowledged: true, created_timestamp: seconds(ctx.at), hash: 'Sjvjlx8G6Z0=' },
  });
  value.contacts = [{ ...contactOf(ctx.user), identity_key_hash: 'Sjvjlx8G6Z0=' }];
  return value;
}

/**
 * A text from a user who adopted a username and still shares their phone number:
 * `profile.username` beside `wa_id`. https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids
 */
export const textWithUsername = (ctx: FormContext) =>
  userValue(
    { ...ctx, user: { ...ctx.user, username: ctx.user.username ?? 'ann.shopper' } },
    userMessage(ctx, 'text', { body: 'Hi from my username' }),
  );

/**
 * A text from a user whose phone number is not shared: no `from`, no `wa_id`; `from_user_id`,
 * `user_id` and `profile.username` name them. https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids
 */
export function textWithoutPhone(ctx: FormContext): UserValue {
  const user = { ...ctx.user, username: ctx.user.username ?? 'ann.shopper' };
  const hidden = { phone: false };
  return userValue({ ...ctx, user }, userMessage(ctx, 'text', { body: 'Hidden number' }, {}, hidden), hidden);
}

/** A text as written before business-scoped user IDs (2025): no `user_id`, no `from_user_id`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text */
export function textBeforeUserIds(ctx: FormContext): UserValue {
  const { from_user_id: _unused, ...message } = userMessage(ctx, 'text', { body: 'An older payload' });
  return { contacts: [{ profile: { name: ctx.user.name }, wa_id: ctx.user.waId }], messages: [message] };
}

// ---- media (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/image, video, audio, document, sticker) -------------------------------

/** An image: `image.{caption?, mime_type, sha256, id, url}`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/image */
export const image = (ctx: FormContext, caption: string | undefined = 'The one on the left') =>
  userValue(
    ctx,
    userMessage(ctx, 'image', { ...(caption !== undefined ? { caption } : {}), ...ctx.media('image') }),
  );

/** A video with a caption. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/video */
export const video = (ctx: FormContext) =>
  userValue(ctx, userMessage(ctx, 'video', { caption: 'Unboxing', ...ctx.media('video') }));

/** An audio file (`voice: false`) or a voice message (`voice: true`, Opus in Ogg). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/audio */
export const audio = (ctx: FormContext, voice: boolean) =>
  userValue(ctx, userMessage(ctx, 'audio', { ...ctx.media(voice ? 'voice' : 'audio'), voice }));

/** A document: `filename` and an optional caption. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/document */
export const document = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(ctx, 'document', {
      caption: 'My invoice',
      filename: 'invoice-0042.pdf',
      ...ctx.media('document'),
    }),
  );

/** A sticker, still or `animated`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/sticker */
export const sticker = (ctx: FormContext, animated: boolean) =>
  userValue(ctx, userMessage(ctx, 'sticker', { ...ctx.media('sticker'), animated }));

// ---- location, contacts, reaction ------------------------------------------------------------------

/** A location, named and addressed or a bare point. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/location */
export const location = (ctx: FormContext, named: boolean) =>
  userValue(
    ctx,
    userMessage(ctx, 'location', {
      latitude: 37.44216251868683,
      longitude: -122.16153582049394,
      ...(named
        ? {
            name: 'Philz Coffee',
            address: '101 Forest Ave, Palo Alto, CA 94301',
            url: 'https://philzcoffee.com',
          }
        : {}),
    }),
  );

/**
 * Contact cards: several cards, a card with several phones (with and without `wa_id`), emails,
 * an organisation, and a card with a name only. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/contacts
 */
export const contactCards = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(ctx, 'contacts', undefined, {
      contacts: [
        {
          name: { formatted_name: 'Barbara J. Johnson', first_name: 'Barbara', last_name: 'Johnson' },
          phones: [
            { phone: '+1 (940) 555-1234', type: 'HOME' },
            { phone: '+1 (650) 555-1234', type: 'WORK', wa_id: '16505551234' },
          ],
          emails: [{ email: 'bjohnson@luckyshrub.com', type: 'WORK' }],
          org: { company: 'Lucky Shrub', department: 'Legal', title: 'Lead Counsel' },
          urls: [{ url: 'https://www.luckyshrub.com', type: 'WORK' }],
          birthday: '1999-01-23',
        },
        {
          name: { formatted_name: 'Pablo Morales' },
          phones: [{ phone: '+55 11 98765-4321', wa_id: '5511987654321', type: 'CELL' }],
        },
        { name: { formatted_name: 'Front desk', first_name: 'Front', last_name: 'desk' } },
      ],
    }),
  );

/** A reaction to a message of the business: `reaction.{message_id, emoji}`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/reaction */
export const reaction = (ctx: FormContext, emoji: string | undefined) =>
  userValue(
    ctx,
    userMessage(ctx, 'reaction', {
      message_id: ctx.target.wamid,
      ...(emoji !== undefined ? { emoji } : {}),
    }),
  );

// ---- replies to the business's interactive messages and templates -------------------------------

/** A tap on a reply button: `interactive.button_reply.{id, title}`, in reply to it. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/interactive */
export const buttonReply = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(
      ctx,
      'interactive',
      { type: 'button_reply', button_reply: { id: 'change-button', title: 'Change' } },
      replyContext(ctx),
    ),
  );

/** A choice in a list message: `interactive.list_reply.{id, title, description}`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/interactive */
export const listReply = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(
      ctx,
      'interactive',
      {
        type: 'list_reply',
        list_reply: { id: 'priority-express', title: 'Express', description: 'Next day to 2 days' },
      },
      replyContext(ctx),
    ),
  );

/** A flow-backed message answered: `interactive.nfm_reply.{name, body, response_json}`. */
const nfmReply = (ctx: FormContext, name: string, bodyText: string, answers: Json) =>
  userValue(
    ctx,
    userMessage(
      ctx,
      'interactive',
      { type: 'nfm_reply', nfm_reply: { name, body: bodyText, response_json: JSON.stringify(answers) } },
      replyContext(ctx),
    ),
  );

/**
 * A completed flow: `interactive.nfm_reply.{name: 'flow', body: 'Sent', response_json}` (the
 * flow's answers as a JSON string). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/interactive
 */
export const flowReply = (ctx: FormContext) =>
  nfmReply(ctx, 'flow', 'Sent', { flow_token: 'booking-42', date: '2026-12-01', seats: '2' });

/** An address message answered: `nfm_reply.{name: 'address_message', response_json}`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/interactive */
export const addressReply = (ctx: FormContext) =>
  nfmReply(ctx, 'address_message', 'Delivery address', {
    values: { name: 'Ann', city: 'Palo Alto', in_pin_code: '94301' },
  });

/** A call permission request answered: `interactive.call_permission_reply`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/interactive */
export const callPermissionReply = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(
      ctx,
      'interactive',
      {
        type: 'call_permission_reply',
        call_permission_reply: {
          response: 'accept',
          is_permanent: false,
          expiration_timestamp: Math.floor(ctx.at / 1000) + 7 * 24 * 3600,
          response_source: 'user_action',
        },
      },
      replyContext(ctx),
    ),
  );

/** A template's quick-reply button tapped: `button.{payload, text}`, in reply to the template. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/button */
export const templateButton = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(ctx, 'button', { payload: 'STOP_PROMOS', text: 'Stop promotions' }, replyContext(ctx)),
  );

/** An order from the business's catalog: `order.{catalog_id, product_items[], text}`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/order */
export const order = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(ctx, 'order', {
      catalog_id: '194836987003835',
      text: 'Please gift wrap',
      product_items: [
        { product_retailer_id: 'di9ozbzfi4', quantity: 2, item_price: 30, currency: 'USD' },
        { product_retailer_id: 'nqryix03ez', quantity: 1, item_price: 25, currency: 'USD' },
      ],
    }),
  );

// ---- what the user did not write ---------------------------------------------------------------------

/**
 * The user changed their phone number (`system.type: user_changed_number`: `wa_id` the new
 * number, the new and previous BSUIDs) or only their BSUID changed (`user_changed_user_id`). No
 * `contacts[]` array. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system
 */
export function system(ctx: FormContext, kind: 'user_changed_number' | 'user_changed_user_id'): UserValue {
  const newWaId = `${ctx.user.waId.slice(0, -4)}${String((Number(ctx.user.waId.slice(-4)) + 1) % 10_000).padStart(4, '0')}`;
  const newUserId = `${ctx.user.userId}7`;
  const changed =
    kind === 'user_changed_number'
      ? {
          body: `User ${ctx.user.name} changed from ${ctx.user.waId} to ${newWaId}`,
          wa_id: newWaId,
          type: kind,
        }
      : { body: `User ${ctx.user.name} changed their user ID`, type: kind };
  return {
    messages: [
      userMessage(ctx, 'system', {
        ...changed,
        user_id: newUserId,
        previous_user_id: ctx.user.userId,
      }),
    ],
  };
}

/**
 * A message of a type the Cloud API does not support (a poll, a view-once photo, …): `type:
 * unsupported`, `unsupported.type`, and `errors` with code 131051. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/unsupported
 */
export const unsupported = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(
      ctx,
      'unsupported',
      { type: 'poll' },
      {
        errors: [
          {
            code: 131051,
            title: 'Message type unknown',
            message: 'Message type unknown',
            error_data: { details: 'Message type is currently not supported.' },
          },
        ],
      },
    ),
  );

/** The same, as earlier payloads wrote it: `type: unknown` with `errors` [131051]. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/unsupported */
export const unknownType = (ctx: FormContext) =>
  userValue(
    ctx,
    userMessage(ctx, 'unknown', undefined, {
      errors: [
        {
          code: 131051,
          title: 'Message type unknown',
          details: 'Message type is not currently supported',
        },
      ],
    }),
  );

/**
 * The user opened a chat with the business for the first time (welcome messages):
 * `type: request_welcome`, no content. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages
 */
export const requestWelcome = (ctx: FormContext) =>
  userValue(ctx, userMessage(ctx, 'request_welcome', undefined));

/** A text the user wrote in a group the business is in: `group_id`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/group */
export const groupText = (ctx: FormContext) =>
  text(ctx, 'Hello group', { group_id: 'Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD' });
