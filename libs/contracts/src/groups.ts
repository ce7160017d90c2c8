/**
 * Group chats: the ids, limits, request bodies and answers of the group routes, and the device
 * commands that carry them to the sender holding the device (only it has the WhatsApp socket).
 */
import { Joi } from './text.js';
import { isLidAddress, USER_SERVER } from './jid.js';
import type { ContactIdentity } from './contact.js';
import type { GroupInvite, GroupUpdateBody } from './group-info.js';
import { PHONE_PATTERN } from './limits.js';
import { GROUP_LIMITS } from './group-limits.js';

/** A group's id: `<digits>@g.us` (new groups), or `<creator phone>-<seconds>@g.us` (older ones). */
export const GROUP_JID_PATTERN = /^\d{5,24}(-\d{5,12})?@g\.us$/;
/** A member's LID as `to`/mentions carry it. */
export const LID_JID_PATTERN = /^\d{5,24}@lid$/;

export const isGroupJid = (to: string): boolean => GROUP_JID_PATTERN.test(to);

export const GROUP_ACTIONS = ['add', 'remove', 'promote', 'demote'] as const;
export type GroupAction = (typeof GROUP_ACTIONS)[number];

/** `chat` of a group message's record and events. */
export interface GroupChat {
  type: 'group';
  id: string;
  subject?: string;
}

/** An entry of GET /groups. */
export interface GroupSummary {
  id: string;
  subject: string;
  size: number;
  /** Only admins may send. */
  announce: boolean;
  /** The account is an admin of the group. */
  isAdmin: boolean;
}

export interface GroupParticipant {
  contact: ContactIdentity;
  admin: boolean;
}

/** GET /groups/:id. */
export interface GroupDetail extends GroupSummary {
  description?: string;
  /** Only admins may change the subject, description and picture. */
  locked: boolean;
  participants: GroupParticipant[];
}

/** Why a participant change did not happen, from WhatsApp's per-participant code. */
export const GROUP_CHANGE_REASONS = [
  'not_admin',
  'not_allowed',
  'not_on_whatsapp',
  'already_member',
  'not_member',
  'recently_left',
  'group_full',
  'failed',
] as const;
export type GroupChangeReason = (typeof GROUP_CHANGE_REASONS)[number];

/** One participant's outcome of a create, change or leave. */
export interface GroupParticipantOutcome {
  /** The participant as the request named it. */
  participant: string;
  ok: boolean;
  reason?: GroupChangeReason;
  /** WhatsApp's code when it refused. */
  code?: string;
}

/** What the sender answers a group command with (in DeviceCommandReply.data). */
export type GroupCommandResult =
  | { groups: GroupSummary[] }
  | { group: GroupDetail }
  | { group?: GroupDetail; participants: GroupParticipantOutcome[] }
  | { invite: GroupInvite };

export type GroupCommand =
  | { type: 'groups-list'; deviceId: string; requestId: string }
  | { type: 'group-get'; deviceId: string; requestId: string; groupId: string }
  | { type: 'group-create'; deviceId: string; requestId: string; subject: string; participants: string[] }
  | {
      type: 'group-participants';
      deviceId: string;
      requestId: string;
      groupId: string;
      action: GroupAction;
      participants: string[];
    }
  | { type: 'group-leave'; deviceId: string; requestId: string; groupId: string }
  | { type: 'group-update'; deviceId: string; requestId: string; groupId: string; changes: GroupUpdateBody }
  | { type: 'group-invite'; deviceId: string; requestId: string; groupId: string; revoke: boolean }
  | { type: 'group-join'; deviceId: string; requestId: string; code: string };

/** A participant: a phone number (digits) or a LID (`<digits>@lid`). */
const member = Joi.alternatives()
  .conditional(Joi.string().pattern(/@/), {
    then: Joi.string().pattern(LID_JID_PATTERN).messages({
      'string.pattern.base':
        '{{#label}} must be a phone number (digits only, 7 to 15) or a LID (<digits>@lid)',
    }),
    otherwise: Joi.string().pattern(PHONE_PATTERN).messages({
      'string.pattern.base':
        '{{#label}} must be a phone number (digits only, 7 to 15) or a LID (<digits>@lid)',
    }),
  })
  .messages({ 'alternatives.any': '{{#label}} must be a phone number or a LID' });

const members = (label: string) =>
  Joi.array()
    .items(member)
    .min(1)
    .max(GROUP_LIMITS.participants)
    .unique()
    .messages({
      'array.base': `"${label}" must be an array of phone numbers or LIDs`,
      'array.min': `"${label}" must list at least one participant`,
      'array.max': `"${label}" may list at most ${GROUP_LIMITS.participants} participants`,
      'array.unique': `"${label}" lists the same participant twice`,
    });

/** `mentions` of POST /send: members' phones or LIDs, rendered as WhatsApp mentions. */
export const mentionsSchema = Joi.array()
  .items(member)
  .min(1)
  .max(GROUP_LIMITS.mentions)
  .unique()
  .messages({
    'array.base': '"mentions" must be an array of phone numbers or LIDs',
    'array.min': '"mentions" must list at least one phone number or LID',
    'array.max': `"mentions" may list at most ${GROUP_LIMITS.mentions} entries`,
    'array.unique': '"mentions" lists the same entry twice',
  });

/** The WhatsApp JID of a mention or participant: a phone number's, or the LID as given. */
export const memberJid = (entry: string): string => (isLidAddress(entry) ? entry : `${entry}@${USER_SERVER}`);

export const groupIdSchema = Joi.string()
  .max(64)
  .pattern(GROUP_JID_PATTERN)
  .required()
  .messages({ 'string.pattern.base': '"id" must be a group id such as 120363012345678901@g.us' });

export interface GroupCreateBody {
  subject: string;
  participants: string[];
}

export const groupCreateBodySchema = Joi.object<GroupCreateBody>({
  subject: Joi.string()
    .min(1)
    .max(GROUP_LIMITS.subject)
    .pattern(/\S/)
    .displayName()
    .required()
    .messages({ 'string.pattern.base': '"subject" must not be blank' }),
  participants: members('participants').required(),
});

export interface GroupParticipantsBody {
  action: GroupAction;
  participants: string[];
}

export const groupParticipantsBodySchema = Joi.object<GroupParticipantsBody>({
  action: Joi.string()
    .valid(...GROUP_ACTIONS)
    .required(),
  participants: members('participants').required(),
});

/** WhatsApp's per-participant code of a group change, as a reason (200: done). */
export function groupChangeReason(
  code: string,
  action: GroupAction | 'create',
): GroupChangeReason | undefined {
  switch (code) {
    case '200':
      return undefined;
    case '401':
      return 'not_admin';
    case '403':
      return 'not_allowed';
    case '404':
      return action === 'add' || action === 'create' ? 'not_on_whatsapp' : 'not_member';
    case '408':
      return 'recently_left';
    case '409':
      return action === 'add' || action === 'create' ? 'already_member' : 'failed';
    case '500':
      return 'group_full';
    default:
      return 'failed';
  }
}

/** The group routes' errors (besides the common ones: 400, 401, 409 no device, 429). */
export const GROUP_ERRORS = {
  /** 404: the account is not in that group, or it does not exist. */
  notFound: 'Group not found',
  /** 502: WhatsApp refused or failed the group request. */
  failed: 'The group request to WhatsApp failed; try again shortly',
  /** 504: the device's holder did not answer in time. */
  timeout: 'The group request to WhatsApp did not finish in time; try again shortly',
  /** 413 on POST /groups, PATCH /groups/:id, /groups/:id/participants and /groups/join. */
  bodyTooLarge: 'Request body too large: group requests are limited to 8 KB',
} as const;
