/**
 * A group's information and how one joins it, through the API: subject, description and settings
 * (PATCH /groups/:id), the invite link (GET /groups/:id/invite, POST /groups/:id/invite/revoke) and
 * joining by code (POST /groups/join); and the `group.updated` event of a change made by anyone.
 */
import { Joi } from './text.js';
import type { ContactIdentity } from './contact.js';
import { GROUP_LIMITS } from './group-limits.js';

/** WhatsApp's description limit (characters). */
export const GROUP_DESCRIPTION_MAX = 2048;

/** An invite link: `https://chat.whatsapp.com/<code>`. */
export const INVITE_LINK_PREFIX = 'https://chat.whatsapp.com/';

/** PATCH /groups/:id: each field given is changed (at least one). */
export interface GroupUpdateBody {
  subject?: string;
  /** `""` removes the description. */
  description?: string;
  /** Only admins may send. */
  announce?: boolean;
  /** Only admins may change the subject, description and picture. */
  locked?: boolean;
}

export const groupUpdateBodySchema = Joi.object<GroupUpdateBody>({
  subject: Joi.string()
    .min(1)
    .max(GROUP_LIMITS.subject)
    .pattern(/\S/)
    .displayName()
    .messages({ 'string.pattern.base': '"subject" must not be blank' }),
  description: Joi.string().allow('').max(GROUP_DESCRIPTION_MAX),
  announce: Joi.boolean().strict(),
  locked: Joi.boolean().strict(),
})
  .or('subject', 'description', 'announce', 'locked')
  .messages({
    'object.missing': 'the body must change at least one of "subject", "description", "announce", "locked"',
  });

/** POST /groups/join: the code, or the whole link (`https://chat.whatsapp.com/<code>`). */
export interface GroupJoinBody {
  code: string;
}

/**
 * A code, or a link to one (`https://chat.whatsapp.com/<code>`, the scheme optional). The link may
 * carry a query or a fragment, as the links WhatsApp shares in 2026 do (`…/<code>?mode=…`); they
 * are dropped, as whatsmeow does since 7c107215.
 */
export const INVITE_PATTERN =
  /^(?:(?:https?:\/\/)?chat\.whatsapp\.com\/([A-Za-z0-9_-]{10,64})\/?(?:[?#]\S*)?|([A-Za-z0-9_-]{10,64}))$/;

export const groupJoinBodySchema = Joi.object<GroupJoinBody>({
  code: Joi.string().max(100).pattern(INVITE_PATTERN).required().messages({
    'string.pattern.base': '"code" must be an invite code or a https://chat.whatsapp.com/<code> link',
  }),
});

/** The code of an invite link or code; undefined when it is neither. */
export function inviteCodeOf(value: string): string | undefined {
  const m = INVITE_PATTERN.exec(value);
  return m ? (m[1] ?? m[2]) : undefined;
}

/** The answer of GET /groups/:id/invite and POST /groups/:id/invite/revoke. */
export interface GroupInvite {
  id: string;
  code: string;
  link: string;
}

export const inviteLinkOf = (code: string): string => `${INVITE_LINK_PREFIX}${code}`;

/** What changed in a group (one `group.updated` event). */
export type GroupChange =
  | { type: 'subject'; subject: string }
  | { type: 'description'; description?: string }
  | { type: 'announce'; announce: boolean }
  | { type: 'locked'; locked: boolean }
  | { type: 'invite_revoked' }
  | {
      type: 'participants';
      action: 'joined' | 'left' | 'promoted' | 'demoted';
      participants: ContactIdentity[];
    };

export const GROUP_CHANGE_TYPES = [
  'subject',
  'description',
  'announce',
  'locked',
  'invite_revoked',
  'participants',
] as const;

/** `data` of a `group.updated` event. */
export interface GroupUpdatedEventData {
  deviceId: string;
  /** The group (`<id>@g.us`). */
  id: string;
  /** Who made the change (absent when WhatsApp did not say). */
  author?: ContactIdentity;
  /** The account itself made it (through the API or on its phone). */
  byAccount: boolean;
  change: GroupChange;
}

/** The group-information routes' errors (besides those of the group routes). */
export const GROUP_INFO_ERRORS = {
  /** 403: the change needs an admin of the group, and the account is not one. */
  notAdmin: 'Only an admin of the group may do this',
  /** 404 on POST /groups/join: no group has this invite code (never had, or it was revoked). */
  inviteNotFound: 'Invite link not found or revoked',
} as const;
