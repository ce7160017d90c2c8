/**
 * The Graph API's message bodies (POST /{phone-number-id}/messages) for what the gateway sends:
 * one function from a message's content to the body, so the shapes of the messages reference live
 * in this package only. https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 */
import type { ContactCard, LocationInput, TemplateInput } from '@mgw/contracts';
import type { GraphMessage } from './graph-client.js';

/** The Cloud API's media types (an attachment's type as the API names it is the same word). */
export type CloudMediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** What one Graph message carries. */
export type CloudContent =
  | { type: 'text'; text: string; previewUrl: boolean }
  | {
      type: 'media';
      mediaType: CloudMediaType;
      /** A media id uploaded by this number, or a URL Meta fetches itself. */
      media: { id: string } | { link: string };
      caption?: string;
      filename?: string;
    }
  /** An empty emoji removes the reaction. `targetWamid`: the WhatsApp id of the message reacted to. */
  | { type: 'reaction'; targetWamid: string; emoji: string }
  | { type: 'location'; location: LocationInput }
  | { type: 'contacts'; contacts: ContactCard[] }
  | { type: 'template'; template: TemplateInput };

export interface CloudEnvelope {
  /** The recipient: a phone number's digits (its wa_id). */
  to: string;
  /** The WhatsApp id of the message this one replies to (`context.message_id`). */
  replyTo?: string;
  /**
   * Echoed in the message's status webhooks (`biz_opaque_callback_data`): the gateway's message id,
   * so a status finds its record even when the answer with the WhatsApp id was lost.
   */
  callbackData?: string;
}

/** Meta's bound of `biz_opaque_callback_data`. */
export const CALLBACK_DATA_MAX = 512;

/** Types whose media object takes a caption (the reference: image, video, document). */
export function cloudCaptionAllowed(type: CloudMediaType): boolean {
  return type === 'image' || type === 'video' || type === 'document';
}

/** Whether a text holds a URL: the Cloud API renders a link preview only when asked (`preview_url`). */
export function hasUrl(text: string): boolean {
  return /\bhttps?:\/\/[^\s]/i.test(text);
}

/** The body of one send, less `messaging_product` and `recipient_type` (GraphClient adds those). */
export function graphMessage(content: CloudContent, envelope: CloudEnvelope): GraphMessage {
  const message: GraphMessage = { to: envelope.to, ...body(content) };
  if (envelope.replyTo !== undefined) message.context = { message_id: envelope.replyTo };
  if (envelope.callbackData !== undefined)
    message.biz_opaque_callback_data = envelope.callbackData.slice(0, CALLBACK_DATA_MAX);
  return message;
}

function body(content: CloudContent): { type: string } & Record<string, unknown> {
  switch (content.type) {
    case 'text':
      return { type: 'text', text: { body: content.text, preview_url: content.previewUrl } };
    case 'media': {
      const t = content.mediaType;
      return {
        type: t,
        [t]: {
          ...content.media,
          ...(content.caption !== undefined && cloudCaptionAllowed(t) ? { caption: content.caption } : {}),
          ...(content.filename !== undefined && t === 'document' ? { filename: content.filename } : {}),
        },
      };
    }
    case 'reaction':
      return { type: 'reaction', reaction: { message_id: content.targetWamid, emoji: content.emoji } };
    case 'location': {
      const { latitude, longitude, name, address } = content.location;
      return {
        type: 'location',
        location: {
          latitude,
          longitude,
          ...(name !== undefined ? { name } : {}),
          ...(address !== undefined ? { address } : {}),
        },
      };
    }
    case 'contacts':
      return { type: 'contacts', contacts: content.contacts.map(contactObject) };
    case 'template': {
      const { name, language, components } = content.template;
      return {
        type: 'template',
        template: { name, language: { code: language }, ...(components?.length ? { components } : {}) },
      };
    }
  }
}

/** A contact card as the Cloud API's contacts object: its name, phones (with their wa_id), email, org. */
function contactObject(card: ContactCard): Record<string, unknown> {
  return {
    name: { formatted_name: card.name, first_name: card.name },
    phones: card.phones.map((p) => {
      const digits = p.replace(/\D/g, '');
      return { phone: `+${digits}`, type: 'CELL', wa_id: digits };
    }),
    ...(card.email !== undefined ? { emails: [{ email: card.email, type: 'WORK' }] } : {}),
    ...(card.organization !== undefined ? { org: { company: card.organization } } : {}),
  };
}
