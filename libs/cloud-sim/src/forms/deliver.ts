/**
 * Delivers a form of the table (table.ts) as Meta would: built for a business number and a user,
 * each body signed with the number's app secret and queued to the app's subscribed callback, in
 * order (webhooks.ts). What the user sends opens their customer service window in the simulator,
 * as it does at Meta, and the files they send are kept for the business's token to fetch
 * (GET /{media-id}, then its URL). A form does not move the simulator's own record of a sent
 * message: it is what arrives, not what happened (`markStatus` is the simulator's own story).
 */
import { createHash, randomBytes } from 'node:crypto';
import { CloudSimError } from '../sim-error.js';
import type { MediaType } from '../validate.js';
import type { NumberIdentity } from '../payloads.js';
import {
  USER_MEDIA,
  type FormContext,
  type FormMedia,
  type FormTarget,
  type UserMediaKind,
  type WebhookBody,
} from './context.js';
import { webhookForm, WEBHOOK_FORMS } from './table.js';

/** What a test asks for (all optional): who writes, the message answered or reported on, repeats. */
export interface FormInput {
  /** The user's phone (digits; default 15550102000). */
  from?: unknown;
  /** Their profile name (default "Ann"). */
  name?: unknown;
  /** Their username, for the forms that name one. */
  username?: unknown;
  /** The wamid of a message the business sent (a status's, a reply's or a reaction's target). */
  target?: unknown;
  /** How many times each body is delivered (Meta redelivers what was not answered 200); 1 to 5. */
  times?: unknown;
}

/** A file the user sent in the form: its media id, type and exact bytes. */
export interface FormFile {
  id: string;
  type: MediaType;
  mimeType: string;
  sha256: string;
  bytes: Buffer;
}

export interface FormDelivery {
  name: string;
  bodies: WebhookBody[];
  /** The wamids of the user's messages in the bodies, once each, in order. */
  messageIds: string[];
  files: FormFile[];
}

/** What the simulator lends a delivery. */
export interface FormHost {
  number(id: string): NumberIdentity;
  now(): number;
  /** A message the simulator sent, by wamid. */
  sent(wamid: string): { id: string; waId: string; callbackData?: string } | undefined;
  keepUserMedia(phoneNumberId: string, file: Omit<FormFile, 'id' | 'sha256'>): FormFile;
  mediaUrl(id: string): string;
  openWindow(phoneNumberId: string, waId: string, at: number): void;
  emit(phoneNumberId: string, body: WebhookBody): void;
}

const DEFAULT_USER = '15550102000';

/** A user's BSUID for a business: a country code, a dot and digits, stable for the pair. */
export function userIdOf(wabaId: string, waId: string): string {
  const digits = BigInt(`0x${createHash('sha256').update(`${wabaId}:${waId}`).digest('hex').slice(0, 15)}`);
  return `US.${digits.toString().padStart(19, '0').slice(0, 19)}`;
}

/** The first bytes of each kind's files (so a file looks like what it says it is), then random ones. */
const MAGIC: Record<UserMediaKind, Buffer> = {
  image: Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  video: Buffer.from('\0\0\0\x18ftypmp42', 'latin1'),
  audio: Buffer.from('ID3\x04\0\0', 'latin1'),
  voice: Buffer.from('OggS\0\x02', 'latin1'),
  document: Buffer.from('%PDF-1.7\n', 'latin1'),
  sticker: Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'),
};
const KIND_TYPE: Record<UserMediaKind, MediaType> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  voice: 'audio',
  document: 'document',
  sticker: 'sticker',
};

const text = (v: unknown, field: string): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw new CloudSimError(400, `${field} must be a non-empty string`);
  return v;
};

export function deliverForm(
  host: FormHost,
  phoneNumberId: string,
  name: unknown,
  input: FormInput = {},
): FormDelivery {
  const form = typeof name === 'string' ? webhookForm(name) : undefined;
  if (!form)
    throw new CloudSimError(
      404,
      `no form ${String(name)}; forms: ${WEBHOOK_FORMS.map((f) => f.name).join(', ')}`,
    );
  const number = host.number(phoneNumberId);
  const waId = (text(input.from, 'from') ?? DEFAULT_USER).replace(/\D/g, '');
  if (waId.length < 7 || waId.length > 15) throw new CloudSimError(400, 'from must be a phone number');
  const times = input.times === undefined ? 1 : input.times;
  if (typeof times !== 'number' || !Number.isInteger(times) || times < 1 || times > 5)
    throw new CloudSimError(400, 'times must be an integer from 1 to 5');
  const username = text(input.username, 'username');
  const files: FormFile[] = [];
  const at = host.now();
  const ctx: FormContext = {
    number,
    user: {
      waId,
      name: text(input.name, 'name') ?? 'Ann',
      userId: userIdOf(number.wabaId, waId),
      ...(username ? { username } : {}),
    },
    at,
    wamid: () => `wamid.${randomBytes(24).toString('base64url')}`,
    media: (kind) => {
      const file = host.keepUserMedia(number.id, {
        type: KIND_TYPE[kind],
        mimeType: USER_MEDIA[kind],
        bytes: Buffer.concat([MAGIC[kind], randomBytes(256)]),
      });
      files.push(file);
      const media: FormMedia = {
        id: file.id,
        mime_type: file.mimeType,
        sha256: file.sha256,
        url: host.mediaUrl(file.id),
      };
      return media;
    },
    target: targetOf(host, input.target, waId),
  };
  const bodies = form.build(ctx);
  const messageIds: string[] = [];
  for (const message of userMessages(bodies)) {
    if (typeof message.id === 'string' && !messageIds.includes(message.id)) messageIds.push(message.id);
    // What the user wrote to the business (not a system notice, not a group) opens their window.
    if (typeof message.from === 'string' && message.type !== 'system' && message.group_id === undefined)
      host.openWindow(number.id, message.from, at);
  }
  for (const b of bodies) for (let i = 0; i < times; i++) host.emit(number.id, b);
  return { name: form.name, bodies, messageIds, files };
}

/** The message a form names: one the simulator sent (by wamid), or a fresh one to the user. */
function targetOf(host: FormHost, target: unknown, waId: string): FormTarget {
  if (target === undefined)
    return { wamid: `wamid.${randomBytes(24).toString('base64url')}`, recipientId: waId };
  if (typeof target !== 'string') throw new CloudSimError(400, 'target must be the wamid of a sent message');
  const sent = host.sent(target);
  if (!sent) throw new CloudSimError(404, `no message ${target}`);
  return {
    wamid: sent.id,
    recipientId: sent.waId,
    ...(sent.callbackData !== undefined ? { callbackData: sent.callbackData } : {}),
  };
}

/** The `messages[]` items of the bodies' `messages` changes. */
function userMessages(bodies: WebhookBody[]): Record<string, unknown>[] {
  return bodies.flatMap((b) =>
    b.entry.flatMap((e) =>
      e.changes
        .filter((c) => c.field === 'messages' && Array.isArray(c.value.messages))
        .flatMap((c) => c.value.messages as Record<string, unknown>[]),
    ),
  );
}
