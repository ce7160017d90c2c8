/**
 * The account itself: its profile (name, "about", photo), its presence, contacts' profiles and
 * presence, and its blocklist — the bodies and answers of those routes, their errors, and the
 * device commands that carry them to the sender holding the device (only it has the socket).
 */
import { Joi } from './text.js';
import type { ContactIdentity } from './contact.js';
import { PHONE_PATTERN } from './limits.js';
import { LID_JID_PATTERN } from './groups.js';
import { BASE64_RULE, isBase64 } from './attachment.js';
import type { UsernameLookupCommand, UsernameLookupResult } from './usernames.js';

export const PROFILE_LIMITS = {
  /** WhatsApp's push name limit (characters). */
  name: 25,
  /** WhatsApp's "about" limit (characters). */
  about: 139,
  /**
   * Largest profile photo taken (bytes, decoded): WhatsApp shows a 640×640 JPEG (Baileys re-encodes
   * the photo to that), so a bigger file only costs memory and transfer.
   */
  photoBytes: 5 * 1024 * 1024,
} as const;

/**
 * Entries of the device's blocklist kept in Redis (`keys.blocklist`). WhatsApp sets no limit a
 * client sees; an account that blocks more than this is not a person's, and the set must stay
 * bounded (entries past the bound are not kept: a send to them is refused by WhatsApp instead).
 */
export const BLOCKLIST_MAX = 10_000;

/** The image types a profile photo may be (by its first bytes): what WhatsApp's clients accept. */
export const PROFILE_PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export type ProfilePhotoType = (typeof PROFILE_PHOTO_TYPES)[number];

/** The image type of `bytes` by its signature, or undefined when it is none of PROFILE_PHOTO_TYPES. */
export function photoTypeOf(bytes: Uint8Array): ProfilePhotoType | undefined {
  const b = bytes;
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'image/png';
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

/** GET /profile: the account as WhatsApp shows it to others. */
export interface AccountProfile {
  phone: string;
  /** The push name contacts see. */
  name?: string;
  /** The "about" text (absent when none is set). */
  about?: string;
  /** A URL of the profile photo on WhatsApp's CDN (it expires; absent when there is none). */
  pictureUrl?: string;
}

/** A business account's public profile (WhatsApp Business). */
export interface BusinessProfile {
  description?: string;
  category?: string;
  email?: string;
  website?: string[];
  address?: string;
}

/** GET /contacts/:number/profile. */
export interface ContactProfile {
  contact: ContactIdentity;
  /** The contact's "about" (absent when it has none or its privacy hides it). */
  about?: string;
  aboutSetAt?: string;
  pictureUrl?: string;
  /** Present only for a business account. */
  business?: BusinessProfile;
}

export const PRESENCE_STATES = ['available', 'unavailable'] as const;
export type AccountPresence = (typeof PRESENCE_STATES)[number];

/** What a contact is doing, as `presence.update` reports it. */
export const CONTACT_PRESENCES = ['online', 'offline', 'typing', 'recording', 'paused'] as const;
export type ContactPresence = (typeof CONTACT_PRESENCES)[number];

/** `data` of presence.update. */
export interface PresenceEventData {
  deviceId: string;
  /** Who: the contact (phone and LID as far as the device knows them). */
  contact: ContactIdentity;
  presence: ContactPresence;
  /** When the contact was last online, when it shares that (with `offline`). */
  lastSeen?: string;
  /** A chat state in a group: the group it is typing in. */
  chat?: { type: 'group'; id: string };
  at: string;
}

/** One entry of GET /blocklist. */
export interface BlockedContact {
  contact: ContactIdentity;
}

/** What the sender answers an account command with (in DeviceCommandReply.data). */
export type AccountCommandResult =
  | { profile: AccountProfile }
  | { contactProfile: ContactProfile }
  | { presence: AccountPresence }
  | { subscribed: true; contact: ContactIdentity }
  | { blocked: boolean; contact: ContactIdentity }
  | UsernameLookupResult;

type Addressed = { deviceId: string; requestId: string };

/**
 * The account commands. A photo travels by reference: the API puts base64 bytes in
 * `keys.profilePhoto` (sealed, 60 s) and the holder takes them from there; a `url` is fetched by
 * the holder through the guarded outbound client (and the device's proxy), as attachments are.
 */
export type AccountCommand =
  | ({ type: 'account-profile-get' } & Addressed)
  | ({ type: 'account-profile-set'; name?: string; about?: string } & Addressed)
  | ({ type: 'account-photo-set'; source: { url: string } | { stored: true } } & Addressed)
  | ({ type: 'account-photo-remove' } & Addressed)
  | ({ type: 'account-contact-profile'; address: string } & Addressed)
  | ({ type: 'account-presence-set'; presence: AccountPresence } & Addressed)
  | ({ type: 'account-presence-subscribe'; address: string } & Addressed)
  | ({ type: 'account-block'; address: string; action: 'block' | 'unblock' } & Addressed)
  | UsernameLookupCommand;

export const isAccountCommand = (cmd: { type: string }): cmd is AccountCommand =>
  cmd.type.startsWith('account-');

/** A contact in a path (`/contacts/:number/…`, `/blocklist/:number`): a phone number or a LID. */
export const contactAddressSchema = Joi.alternatives()
  .conditional(Joi.string().pattern(/@/), {
    then: Joi.string().pattern(LID_JID_PATTERN),
    otherwise: Joi.string().pattern(PHONE_PATTERN),
  })
  .required()
  .messages({
    'string.pattern.base': '{{#label}} must be a phone number (digits only, 7 to 15) or a LID (<digits>@lid)',
    'alternatives.any': '{{#label}} must be a phone number or a LID',
  });

const text = (max: number, label: string) =>
  Joi.string()
    .max(max)
    .messages({ 'string.max': `"${label}" may have at most ${max} characters` });

export interface ProfileBody {
  name?: string;
  about?: string;
}

/** PATCH /profile: the name, the "about", or both. */
export const profileBodySchema = Joi.object<ProfileBody>({
  name: text(PROFILE_LIMITS.name, 'name').pattern(/\S/).displayName().messages({
    'string.pattern.base': '"name" must not be blank',
    'string.empty': '"name" must not be blank',
  }),
  // An empty "about" clears it, as WhatsApp's own clients do.
  about: text(PROFILE_LIMITS.about, 'about').allow(''),
})
  .or('name', 'about')
  .messages({ 'object.missing': 'Give "name", "about" or both' });

export interface ProfilePhotoBody {
  url?: string;
  base64?: string;
}

/** PUT /profile/photo: the photo from a URL (https or http) or as base64. */
export const profilePhotoBodySchema = Joi.object<ProfilePhotoBody>({
  // The length first: a multi-megabyte "URL" is refused before the URI rule reads it.
  url: Joi.string()
    .max(2048)
    .uri({ scheme: ['http', 'https'] }),
  // Its size is the body limit's and then the decoded bytes' (413 `photoTooLarge`), not a 400.
  base64: Joi.string().custom(
    (value: string, helpers) => (isBase64(value) ? value : helpers.error('string.base64')),
    BASE64_RULE,
  ),
})
  .xor('url', 'base64')
  .messages({
    'object.missing': 'Give the photo as "url" or "base64"',
    'object.xor': 'Give the photo as "url" or "base64", not both',
  });

export interface PresenceBody {
  presence: AccountPresence;
}

/** PUT /presence. */
export const presenceBodySchema = Joi.object<PresenceBody>({
  presence: Joi.string()
    .valid(...PRESENCE_STATES)
    .required(),
});

export interface BlockBody {
  phone: string;
}

/** POST /blocklist: the contact to block (a phone number or a LID the device knows). */
export const blockBodySchema = Joi.object<BlockBody>({ phone: contactAddressSchema });

/** The account routes' errors (besides the common ones: 400, 401, 403 pool token, 409 no device, 429). */
export const ACCOUNT_ERRORS = {
  /** 404 on a contact route: the number is not on WhatsApp (or a LID the device never met). */
  contactNotFound: 'Contact not found: the number is not on WhatsApp',
  /** 502: WhatsApp refused or failed the request. */
  failed: 'The request to WhatsApp failed; try again shortly',
  /** 504: the device's holder did not answer in time. */
  timeout: 'The request to WhatsApp did not finish in time; try again shortly',
  /** 400 detail: the photo is not a JPEG, PNG or WebP image. */
  photoNotImage: 'The photo must be a JPEG, PNG or WebP image',
  /** 413: the photo (decoded, or as downloaded) is over PROFILE_LIMITS.photoBytes. */
  photoTooLarge: 'Profile photo too large: the limit is 5 MB',
  /** 422: the photo URL could not be fetched (refused address, not found, timeout). */
  photoUnreachable: 'The photo URL could not be fetched',
  /** 413 on the body of PUT /profile/photo. */
  photoBodyTooLarge: 'Request body too large: a profile photo is limited to 5 MB',
  /** 413 on the other account routes: their bodies are a few short fields. */
  bodyTooLarge: 'Request body too large: account requests are limited to 4 KB',
  /** 409 on PUT /presence: WhatsApp ignores presence from an account without a name. */
  presenceNeedsName: 'The account has no name yet: set one with PATCH /profile first',
  /** 422 on /send, /otp: the recipient is on the account's blocklist. */
  recipientBlocked: 'The recipient is blocked by this account: unblock it first (DELETE /blocklist/{number})',
} as const;

/** How an account command failed (DeviceCommandReply.error). */
export const ACCOUNT_COMMAND_ERRORS = {
  notFound: 'not-found',
  photoNotImage: 'photo-not-image',
  photoTooLarge: 'photo-too-large',
  photoUnreachable: 'photo-unreachable',
  noName: 'no-name',
} as const;
