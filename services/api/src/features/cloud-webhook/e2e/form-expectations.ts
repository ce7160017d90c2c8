/**
 * What the gateway must make of what Meta sends, read from Meta's JSON itself (not through our
 * parser): the mapping table of docs/cloud-api.md ("What each inbound form becomes") as code, for
 * the forms matrix (cloud-webhook-forms.test.ts). A message type the table does not know throws:
 * a form the simulator learns to write fails the matrix until the gateway's answer is decided.
 */
import { FAILURE_REASONS, PHONE_PATTERN, checkUsername, type ContactCard } from '@mgw/contracts';
import type { WebhookBody } from '@mgw/cloud-sim';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What `message.received` carries of the message (beside its ids, contact and time). */
export interface ReceivedFields {
  text?: string;
  attachment?: { type: string; mimeType: string; fileName?: string };
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: ContactCard[];
  /** The wamid the message quotes (the event's `replyTo` is our id of it, when it is ours). */
  quotes?: string;
}

export type Expected = { wamid: string; from?: string } & (
  | { kind: 'received'; fields: ReceivedFields; username?: string; mediaId?: string }
  | { kind: 'reaction'; emoji: string; target: string }
  /** Not recorded, no event; `window` whether the contact's 24-hour window opens all the same. */
  | { kind: 'ignored'; window: boolean; why: string }
);

/** The `messages` changes of the bodies for the number, in order. */
export function messageValues(bodies: WebhookBody[], phoneNumberId: string): Json[] {
  return bodies.flatMap((b) =>
    b.entry.flatMap((e) =>
      e.changes
        .filter((c) => c.field === 'messages' && obj(c.value.metadata).phone_number_id === phoneNumberId)
        .map((c) => c.value),
    ),
  );
}

/** Each distinct message of the bodies (first delivery wins) and what the gateway makes of it. */
export function expectedMessages(bodies: WebhookBody[], phoneNumberId: string): Expected[] {
  const seen = new Map<string, Expected>();
  for (const value of messageValues(bodies, phoneNumberId)) {
    const usernames = new Map<string, string>();
    for (const c of (value.contacts as Json[] | undefined) ?? []) {
      const name = str(obj(c.profile).username);
      const checked = name ? checkUsername(name) : undefined;
      if (str(c.wa_id) && checked?.ok) usernames.set(c.wa_id as string, checked.username);
    }
    for (const m of (value.messages as Json[] | undefined) ?? []) {
      const wamid = m.id as string;
      if (!seen.has(wamid)) seen.set(wamid, expectedOf(m, usernames));
    }
  }
  return [...seen.values()];
}

function expectedOf(m: Json, usernames: Map<string, string>): Expected {
  const wamid = m.id as string;
  const from = str(m.from);
  const base = { wamid, ...(from ? { from } : {}) };
  const ignored = (window: boolean, why: string): Expected => ({ ...base, kind: 'ignored', window, why });
  if (m.group_id !== undefined) return ignored(false, 'a group message: no chat of the device');
  if (!from) return ignored(false, 'no phone number: the gateway names contacts by phone or LID');
  const type = m.type as string;
  const content = obj(m[type]);
  const received = (fields: ReceivedFields): Expected => {
    const quotes = str(obj(m.context).id);
    const username = usernames.get(from);
    return {
      ...base,
      kind: 'received',
      fields: { ...fields, ...(quotes ? { quotes } : {}) },
      ...(username ? { username } : {}),
      ...(fields.attachment ? { mediaId: content.id as string } : {}),
    };
  };
  switch (type) {
    case 'text':
      return received({ text: content.body as string });
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker': {
      const caption = str(content.caption);
      const fileName = str(content.filename);
      return received({
        ...(caption ? { text: caption } : {}),
        attachment: { type, mimeType: content.mime_type as string, ...(fileName ? { fileName } : {}) },
      });
    }
    case 'location':
      return received({
        location: {
          latitude: Number(content.latitude),
          longitude: Number(content.longitude),
          ...(str(content.name) ? { name: content.name as string } : {}),
          ...(str(content.address) ? { address: content.address as string } : {}),
        },
      });
    case 'contacts':
      return received({ contacts: (m.contacts as Json[]).map(cardOf) });
    case 'reaction':
      return {
        ...base,
        kind: 'reaction',
        emoji: str(content.emoji) ?? '',
        target: content.message_id as string,
      };
    case 'interactive': {
      const reply = obj(content[content.type as string]);
      if (content.type === 'button_reply' || content.type === 'list_reply')
        return received({ text: reply.title as string });
      if (content.type === 'nfm_reply') return received({ text: reply.response_json as string });
      return ignored(true, `interactive ${String(content.type)}: nothing the contract carries`);
    }
    case 'button':
      return received({ text: content.text as string });
    case 'order':
      return ignored(true, 'an order: the contract has no field for its items');
    case 'system':
      return ignored(false, 'a system notice: the contact wrote nothing');
    case 'unsupported':
    case 'unknown':
      return ignored(true, 'a type the Cloud API does not deliver (131051)');
    case 'request_welcome':
      return ignored(true, 'a first chat opened: no message');
    default:
      throw new Error(
        `the matrix has no expectation for a message of type ${type}: decide one (docs/cloud-api.md)`,
      );
  }
}

/** A card as the contract keeps it: its formatted name, its numbers (wa_id, else the digits), email, company. */
function cardOf(c: Json): ContactCard {
  const phones = ((c.phones as Json[] | undefined) ?? [])
    .map((p) => str(p.wa_id) ?? String(p.phone ?? '').replace(/\D/g, ''))
    .filter((d) => PHONE_PATTERN.test(d));
  const email = str(obj(((c.emails as Json[] | undefined) ?? [])[0]).email);
  const organization = str(obj(c.org).company);
  return {
    name: obj(c.name).formatted_name as string,
    phones: [...new Set(phones)],
    ...(email ? { email } : {}),
    ...(organization ? { organization } : {}),
  };
}

const RANK: Record<string, number> = { queued: 0, sent: 1, delivered: 2, read: 3 };
const REASONS: Record<number, string> = {
  131026: FAILURE_REASONS.undeliverable,
  131047: FAILURE_REASONS.windowClosed,
};

/**
 * Where the statuses of the bodies leave a record that was `start` (sent by the sender): a status
 * names it by its wamid or our messageId (callback data); `played` is read (as a linked device's
 * played receipt is); nothing moves back; `failed` only from queued or sent, with the reason of its
 * first error's code; nothing moves a failed record.
 */
export function expectedRecord(
  bodies: WebhookBody[],
  phoneNumberId: string,
  target: { wamid: string; messageId: string },
  start: 'sent' = 'sent',
): { status: string; error?: string } {
  let record: { status: string; error?: string } = { status: start };
  for (const value of messageValues(bodies, phoneNumberId))
    for (const s of (value.statuses as Json[] | undefined) ?? []) {
      if (s.id !== target.wamid && s.biz_opaque_callback_data !== target.messageId) continue;
      const status = s.status === 'played' ? 'read' : (s.status as string);
      if (record.status === 'failed') continue;
      if (status === 'failed') {
        if (RANK[record.status]! <= RANK.sent!) {
          const code = obj(((s.errors as Json[] | undefined) ?? [])[0]).code as number;
          record = { status: 'failed', error: REASONS[code] ?? FAILURE_REASONS.undeliverable };
        }
      } else if (RANK[status]! > RANK[record.status]!) record = { status };
    }
  return record;
}
