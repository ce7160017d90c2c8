import type { MessageEvent } from '@mgw/cloud';
import type { ArrivingMedia } from './keep-media.js';
import type { RedisClient } from '@mgw/common';
import {
  KIND_LIMITS,
  PHONE_PATTERN,
  type ContactCard,
  type ContactIdentity,
  type Metrics,
} from '@mgw/contracts';
import {
  confirmationText,
  matchKeyword,
  optIn,
  optOut,
  readOptOutSettings,
  type CloudDeviceStore,
  type InboundInput,
  type InboundStore,
  type MessageKindStore,
} from '@mgw/store';

/**
 * What a contact's message did: recorded now, seen before (Meta redelivers), or of a kind the
 * contract has no field for (`order`, `unsupported`, a call permission, …: the window still opens).
 */
export type MessageOutcome = 'applied' | 'unchanged' | 'unsupported' | 'no_phone';

/** A message whose writer Meta names by phone: the only ones the gateway's contacts can be. */
type PhoneMessage = MessageEvent & { from: string };

/** A contact's opt-out or opt-in keyword, applied to the device's suppression list. */
export interface KeywordOptOuts {
  /** The list's change the text made, if it is a keyword and the list changed. */
  onText(deviceId: string, phone: string, text: string): Promise<'opted_out' | 'opted_in' | undefined>;
}

export interface MessageDeps {
  inbound: Pick<InboundStore, 'record'>;
  /** Keeps an attachment in the media store before its message is recorded, when the device wants it (keep-media.ts). */
  keep(deviceId: string, arriving: ArrivingMedia): Promise<void>;
  kinds: Pick<MessageKindStore, 'recordReaction'>;
  windows: Pick<CloudDeviceStore, 'keepWindow'>;
  optOuts: KeywordOptOuts;
  metrics: Pick<Metrics, 'messages' | 'optOutChanges' | 'inboundKinds'>;
}

/** Meta does not say an attachment's size in the webhook: the record's `size` is 0 until fetched. */
const UNKNOWN_SIZE = 0;

/**
 * Records a contact's message to a cloud device as the linked engine records one (InboundStore:
 * the record, the message index, the chat, `message.received` — so webhooks, SSE, pull, brokers,
 * MCP and the console's inbox see it unchanged), once per wamid; a reaction updates the message
 * it names (`message.reaction`), as a linked device's does. Either way the contact wrote: their
 * 24-hour window runs from this message. A text that is one of the device's keywords changes its
 * suppression list as on a linked device. A kind the contract has no field for is not recorded
 * (its window opens all the same); a system notice or a group message neither.
 */
export async function recordMessage(
  deps: MessageDeps,
  deviceId: string,
  event: MessageEvent,
  now = Date.now(),
): Promise<MessageOutcome> {
  // A system notice (the contact changed their number) is no word of theirs, and a group message no
  // chat of the device (the gateway's groups are a linked account's): neither is recorded, neither
  // opens the contact's window.
  if (event.type === 'system' || event.groupId !== undefined) return 'unsupported';
  // A contact whose phone Meta does not share (a username, 2026) is named by a business-scoped
  // user ID, an identity the gateway has no place for (contacts are phones or LIDs): counted, not
  // recorded (docs/cloud-api.md "What each inbound form becomes").
  if (!hasPhone(event)) return 'no_phone';
  await deps.windows.keepWindow(deviceId, event.from, event.timestampMs, now);
  // Who wrote, as the linked engine names contacts: their phone, and their username when they have one.
  const contact = { phone: event.from, ...(event.username ? { username: event.username } : {}) };
  const receivedAt = new Date(Math.min(event.timestampMs, now));
  if (event.type === 'reaction') {
    if (!event.reaction) return 'unchanged';
    const recorded = await deps.kinds.recordReaction(deviceId, {
      targetPlatformMessageId: event.reaction.wamid,
      contact,
      emoji: event.reaction.emoji,
      at: receivedAt,
      platformMessageId: event.wamid,
    });
    deps.metrics.inboundKinds.inc({ kind: 'reaction', outcome: recorded ? 'recorded' : 'duplicate' });
    return recorded ? 'applied' : 'unchanged';
  }
  const input = inboundInput(event, contact, receivedAt);
  // As a linked device's parser drops what it cannot read: an empty message.received tells no one anything.
  if (input.text === undefined && !input.attachment && !input.location && !input.contacts)
    return 'unsupported';
  if (event.media && hasAttachment(input))
    await deps.keep(deviceId, { wamid: event.wamid, mediaId: event.media.id, type: event.media.type, input });
  const messageId = await deps.inbound.record(deviceId, input);
  if (!messageId) return 'unchanged';
  deps.metrics.messages.inc({ status: 'received' });
  if (event.text !== undefined && saysKeyword(event)) {
    const change = await deps.optOuts.onText(deviceId, event.from, event.text);
    if (change) deps.metrics.optOutChanges.inc({ direction: change, source: 'keyword' });
  }
  return 'applied';
}

/**
 * Whether the message's text is words the contact chose to send, which a keyword may be: a text,
 * or the title of a button or list row they tapped (an opt-out button says STOP as well as typing
 * it does). A caption or a flow's JSON answer is no keyword.
 */
function saysKeyword(event: PhoneMessage): boolean {
  return event.type === 'text' || (event.reply !== undefined && event.reply !== 'nfm_reply');
}

const hasAttachment = (input: InboundInput): input is ArrivingMedia['input'] =>
  input.attachment !== undefined;

const hasPhone = (event: MessageEvent): event is PhoneMessage => event.from !== undefined;

/** The store's input of a cloud message: what its type carries, in the linked engine's terms. */
export function inboundInput(event: PhoneMessage, contact: ContactIdentity, receivedAt: Date): InboundInput {
  const cards = event.contacts?.slice(0, KIND_LIMITS.contacts).map(contactCard);
  const text = event.text ?? event.media?.caption;
  return {
    platformMessageId: event.wamid,
    from: event.from,
    contact,
    receivedAt,
    ...(text !== undefined ? { text } : {}),
    ...(event.contextWamid ? { quotedPlatformMessageId: event.contextWamid } : {}),
    ...(event.media
      ? {
          attachment: {
            type: event.media.type,
            mimeType: event.media.mimeType ?? 'application/octet-stream',
            ...(event.media.filename ? { fileName: event.media.filename } : {}),
            size: UNKNOWN_SIZE,
          },
          // What GET /messages/:id/media asks the Graph API for (messages/cloud-media.ts).
          cloudMediaId: event.media.id,
        }
      : {}),
    ...(event.location ? { location: event.location } : {}),
    ...(cards?.length ? { contacts: cards } : {}),
  };
}

/**
 * A card as the contract keeps a linked device's (docs/message-kinds.md "Contact cards"): its name,
 * its numbers as international digits (its WhatsApp id when given), its email and company. A card
 * with a name and no number is kept, as a vCard with no TEL is.
 */
function contactCard(card: NonNullable<MessageEvent['contacts']>[number]): ContactCard {
  const phones = card.phones
    .map((p) => p.waId ?? p.phone.replace(/\D/g, ''))
    .filter((digits) => PHONE_PATTERN.test(digits));
  return {
    name: card.name,
    phones: [...new Set(phones)],
    ...(card.email ? { email: card.email } : {}),
    ...(card.organization ? { organization: card.organization } : {}),
  };
}

/** Queues `text` to `to` as the device's own message (its opt-out confirmation); its messageId. */
export type DeviceTexts = (deviceId: string, to: string, text: string) => Promise<string>;

/**
 * The keywords against the store, as the linked engine's holder applies them
 * (services/sender inbound/opt-outs.ts): a change of the list is confirmed to the contact when the
 * device's confirmation is on, by a message of the device like those of /send (`confirm`), which
 * its 24-hour window — opened by the keyword itself — lets the Cloud API send free-form. A
 * confirmation that could not be queued is the caller's to log (`onConfirmFailed`); the list's
 * change stands.
 */
export function storeOptOuts(
  redis: RedisClient,
  confirm: DeviceTexts,
  onConfirmFailed: (err: unknown) => void,
): KeywordOptOuts {
  return {
    async onText(deviceId, phone, text) {
      const { settings } = await readOptOutSettings(redis, deviceId);
      const match = matchKeyword(settings, text);
      if (!match) return undefined;
      const changed =
        match.direction === 'out'
          ? await optOut(redis, deviceId, phone, 'keyword')
          : await optIn(redis, deviceId, phone, 'keyword');
      if (!changed) return undefined;
      if (settings.confirmation)
        await confirm(deviceId, phone, confirmationText(settings, match)).catch(onConfirmFailed);
      return match.direction === 'out' ? 'opted_out' : 'opted_in';
    },
  };
}
