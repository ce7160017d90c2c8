import {
  type ContactIdentity,
  type GroupChat,
  type ReactionInput,
  type ReactionTarget,
  type SendTo,
} from '@mgw/contracts';
import type { RedisClient } from '@mgw/common';
import { ContactIdentities, type InboundStore, type MessageStore } from '@mgw/store';
import { invalid, isRefusal, refused, type Refusal } from '../../enqueue/refusal.js';

export interface ReactionTargetDeps {
  messages: Pick<MessageStore, 'get'>;
  inbound: Pick<InboundStore, 'get'>;
  /** Reads the device's phone <-> LID map (the chat may be named by the contact's other identity). */
  redis: RedisClient;
}

/** Both identities of a one-to-one chat's contact, as the device's map knows them. */
function identities(deps: ReactionTargetDeps, deviceId: string, address: string | undefined) {
  return address
    ? new ContactIdentities(deps.redis).resolve(deviceId, address)
    : Promise.resolve({} as ContactIdentity);
}

/**
 * The JID of a group message's author, as the reaction's key names it: its LID when known (how
 * WhatsApp names members of the groups it moved to LID addressing, and every newer client), else
 * its phone number.
 */
function authorJid(contact: ContactIdentity | undefined): string | undefined {
  if (contact?.lid) return contact.lid;
  return contact?.phone ? `${contact.phone}@s.whatsapp.net` : undefined;
}

/**
 * The message a reaction is on, as WhatsApp knows it: one of the device's messages (one it sent,
 * or one a contact sent it), in the chat of `to` — a reaction goes to the chat of its message, so
 * `to` is that one number or LID (either identity of the contact, as the device's map knows it), or
 * the group's id for a message in a group. Refused for an id that is no message of this device (another
 * device's too), for a message that failed (WhatsApp never had it), and for another chat.
 */
export async function reactionTarget(
  deps: ReactionTargetDeps,
  deviceId: string,
  reaction: ReactionInput,
  to: SendTo | SendTo[],
): Promise<ReactionTarget | Refusal> {
  const found = await chatOf(deps, deviceId, reaction);
  if (isRefusal(found)) return found;
  const entries = Array.isArray(to) ? to : [to];
  const phones = entries.map((e) => (typeof e === 'string' ? e : e.phone));
  if (phones.length !== 1 || !found.chat.includes(phones[0]))
    return invalid([
      {
        path: ['to'],
        message: 'to must be the one number, LID or group id of the chat of the message reacted to',
      },
    ]);
  return found.target;
}

/** The message reacted to, as its reaction names it, and the names of its chat. */
async function chatOf(
  deps: ReactionTargetDeps,
  deviceId: string,
  reaction: ReactionInput,
): Promise<{ target: ReactionTarget; chat: (string | undefined)[] } | Refusal> {
  const notFound = refused('reaction_target_not_found');
  const record = await deps.messages.get(deviceId, reaction.messageId);
  if (!record || record.deviceId !== deviceId) return notFound;
  // The chat's names: its number and/or LID (a LID-only contact has no number), or a group's id.
  let chat: (string | undefined)[];
  let target: ReactionTarget;
  if (record.direction === 'inbound') {
    const inbound = await deps.inbound.get(deviceId, reaction.messageId);
    if (!inbound) return notFound;
    const { contact, chat: group } = inbound as { contact?: ContactIdentity; chat?: GroupChat };
    if (group) {
      // A member's message in a group: the reaction goes to the group, naming the member who wrote it.
      chat = [group.id];
      target = {
        platformMessageId: inbound.platformMessageId,
        fromMe: false,
        participant: authorJid(contact),
      };
    } else {
      const known = await identities(deps, deviceId, contact?.lid ?? inbound.from);
      chat = [inbound.from, contact?.phone, contact?.lid, known.phone, known.lid];
      target = { platformMessageId: inbound.platformMessageId, fromMe: false };
    }
  } else {
    if (record.status === 'failed') return refused('reaction_target_failed');
    const known = await identities(deps, deviceId, record.to);
    chat = [record.to, known.phone, known.lid];
    target = { platformMessageId: record.platformMessageId, fromMe: true };
  }
  return { target, chat };
}
