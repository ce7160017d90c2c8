/** The group routes and their answers in the OpenAPI document (see docs/groups.md). */
import {
  GROUP_CHANGE_REASONS,
  GROUP_JID_PATTERN,
  GROUP_LIMITS,
  emptyQuerySchema,
  groupCreateBodySchema,
  groupJoinBodySchema,
  groupParticipantsBodySchema,
  groupUpdateBodySchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import type { Operations } from '../../http/route-table.js';
import type { GroupName } from './mount.js';
import { closed, ref, result, str } from '../../openapi/schema-helpers.js';

/** `contact` of records, events, reactions, poll votes and group members: the one ContactIdentity component. */
export const contactIdentitySchema = closed(
  {
    phone: str('The phone number (digits), when known.'),
    lid: {
      type: 'string',
      pattern: '^\\d+@lid$',
      description: 'The LID (`<digits>@lid`, usable as `to`), when known.',
    },
    username: {
      type: 'string',
      pattern: '^[a-z0-9_.]{3,35}$',
      description:
        'Its WhatsApp username (lower case, without `@`), when the device knows one for its LID (docs/usernames.md); `@` + it is usable as `to`.',
    },
  },
  [],
);

/** `chat` of a group message's record and events. */
export const groupChatSchema = closed(
  {
    type: { const: 'group' },
    id: { type: 'string', pattern: GROUP_JID_PATTERN.source, description: 'The group (`<id>@g.us`).' },
    subject: str('The group subject when the message was recorded.'),
  },
  ['type', 'id'],
);

const summary = {
  id: { type: 'string', pattern: GROUP_JID_PATTERN.source, description: 'The group id, usable as `to`.' },
  subject: str('The group subject.'),
  size: { type: 'integer', minimum: 0, description: 'Members, the account included.' },
  announce: { type: 'boolean', description: 'Only admins may send.' },
  isAdmin: { type: 'boolean', description: 'The account is an admin of the group.' },
};
const summaryRequired = ['id', 'subject', 'size', 'announce', 'isAdmin'];

const outcome = closed(
  {
    participant: str('The participant as the request named it.'),
    ok: { type: 'boolean', description: 'It happened.' },
    reason: {
      enum: [...GROUP_CHANGE_REASONS],
      description:
        "Why not: `not_admin` (the account is not an admin), `not_allowed` (the contact's privacy refuses being added: invite them instead), `not_on_whatsapp`, `already_member`, `not_member`, `recently_left` (they left lately: WhatsApp refuses adding them back for a while), `group_full`, `failed`.",
    },
    code: str("WhatsApp's code when it refused."),
  },
  ['participant', 'ok'],
);

export const groupSchemas: Record<string, JsonSchema> = {
  ContactIdentity: contactIdentitySchema,
  GroupChat: groupChatSchema,
  GroupList: result(
    closed({ groups: { type: 'array', items: closed(summary, summaryRequired) } }, ['groups']),
  ),
  GroupDetail: closed(
    {
      ...summary,
      description: str('The group description.'),
      locked: {
        type: 'boolean',
        description: 'Only admins may change the subject, description and picture.',
      },
      participants: {
        type: 'array',
        items: closed({ contact: ref('ContactIdentity'), admin: { type: 'boolean' } }, ['contact', 'admin']),
      },
    },
    [...summaryRequired, 'locked', 'participants'],
  ),
  GroupResult: result(closed({ group: ref('GroupDetail') }, ['group'])),
  GroupCreated: result(
    closed({ group: ref('GroupDetail'), participants: { type: 'array', items: outcome } }, [
      'group',
      'participants',
    ]),
  ),
  GroupParticipantsChanged: result(
    closed(
      {
        id: summary.id,
        action: { enum: ['add', 'remove', 'promote', 'demote'] },
        participants: { type: 'array', items: outcome },
      },
      ['id', 'action', 'participants'],
    ),
  ),
  GroupLeft: result(closed({ id: summary.id, left: { const: true } }, ['id', 'left'])),
  GroupInvite: result(
    closed(
      {
        invite: closed(
          {
            id: summary.id,
            code: str('The invite code.'),
            link: {
              type: 'string',
              format: 'uri',
              description: 'The link: `https://chat.whatsapp.com/<code>`.',
            },
          },
          ['id', 'code', 'link'],
        ),
      },
      ['invite'],
    ),
  ),
};

const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The group id (`<id>@g.us`).',
  schema: { type: 'string', pattern: GROUP_JID_PATTERN.source },
};

const CACHE =
  "**Choice:** the sender holding the device answers from its group cache (Baileys' `cachedGroupMetadata`), filled by the first query of a group and kept current by WhatsApp's group notifications; a send to a group reads the same cache, so it does not ask WhatsApp for the members each time.";

/** The group routes' operations, by handler (mount.ts), built with the document's `operation`. */
export function groupOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<GroupName> {
  const rateLimit = config.rateLimits.groups;
  const withId = (op: JsonSchema) => {
    const o = op as { parameters?: JsonSchema[] };
    o.parameters = [idParam, ...(o.parameters ?? [])];
    return op;
  };
  const base = { tag: 'Groups' as const, rateLimit, query: emptyQuerySchema };
  return {
    list: operation({
      ...base,
      summary: "The account's groups",
      description: [
        'Every group the account is a member of: id, subject, size, whether only admins may send (`announce`) and whether the account is an admin.',
        CACHE,
        '409 when the device is not connected; 502 when WhatsApp refused or failed; 504 when no answer came in time.',
      ].join('\n\n'),
      success: { status: 200, schema: 'GroupList', description: 'The groups, by id.' },
      errors: [409, 502, 504],
    }),
    create: operation({
      ...base,
      summary: 'Create a group',
      description: [
        `Creates a group with \`subject\` (1-${GROUP_LIMITS.subject} characters) and 1 to ${GROUP_LIMITS.participants} participants (phone numbers or LIDs); the account is its creator and admin. The answer says per participant whether it was added.`,
        `**Choice:** at most ${GROUP_LIMITS.participants} participants per request (WhatsApp takes more): adding many strangers at once is what gets accounts banned. Send \`Idempotency-Key\` so a retried create makes one group.`,
      ].join('\n\n'),
      body: groupCreateBodySchema,
      idempotent: true,
      success: {
        status: 200,
        schema: 'GroupCreated',
        description: "The group and each participant's outcome.",
      },
      errors: [409, 413, 502, 504],
    }),
    get: withId(
      operation({
        ...base,
        summary: 'One group',
        description: [
          'Subject, description, settings and participants (`contact` with phone and/or LID, `admin`).',
          CACHE,
          '404 when the account is not in the group (or it does not exist).',
        ].join('\n\n'),
        success: { status: 200, schema: 'GroupResult', description: 'The group.' },
        errors: [404, 409, 502, 504],
      }),
    ),
    update: withId(
      operation({
        ...base,
        summary: "Change a group's subject, description or settings",
        description: [
          `Each field given changes, in this order: \`subject\` (1-${GROUP_LIMITS.subject} characters), \`description\` (\`""\` removes it), \`announce\` (only admins may send), \`locked\` (only admins may change the subject, description and picture). The answer is the group as it is now. Every member's devices are told (\`group.updated\`).`,
          '**Choice:** 403 `Only an admin of the group may do this`, before anything changes, when the account is not an admin and the change needs one (settings always; subject and description while the group is locked); 404 when the account is not in the group.',
        ].join('\n\n'),
        body: groupUpdateBodySchema,
        idempotent: true,
        success: { status: 200, schema: 'GroupResult', description: 'The group after the change.' },
        errors: [404, 409, 413, 502, 504],
      }),
    ),
    join: operation({
      ...base,
      summary: 'Join a group by its invite link',
      description: [
        '`code`: the invite code, or the whole link (`https://chat.whatsapp.com/<code>`). The account joins the group; the answer is the group.',
        '404 `Invite link not found or revoked` when no group has that code (WhatsApp answers 406 or 410).',
      ].join('\n\n'),
      body: groupJoinBodySchema,
      idempotent: true,
      success: { status: 200, schema: 'GroupResult', description: 'The group joined.' },
      errors: [404, 409, 413, 502, 504],
    }),
    invite: withId(
      operation({
        ...base,
        summary: "The group's invite link",
        description:
          "The group's invite code and link (WhatsApp makes one on the first ask). Only admins may read it: 403 otherwise; 404 when the account is not in the group.",
        success: { status: 200, schema: 'GroupInvite', description: 'The invite link.' },
        errors: [404, 409, 502, 504],
      }),
    ),
    revokeInvite: withId(
      operation({
        ...base,
        summary: "Revoke the group's invite link",
        description:
          'The old link stops working and a new one is made (answered). Only admins: 403 otherwise; 404 when the account is not in the group.',
        idempotent: true,
        success: { status: 200, schema: 'GroupInvite', description: 'The new invite link.' },
        errors: [404, 409, 502, 504],
      }),
    ),
    participants: withId(
      operation({
        ...base,
        summary: 'Add, remove, promote or demote participants',
        description: `\`action\` (add, remove, promote, demote) for 1 to ${GROUP_LIMITS.participants} participants (phone numbers or LIDs). The account must be an admin. The answer says per participant what happened (\`ok\`, else \`reason\` and WhatsApp's \`code\`).`,
        body: groupParticipantsBodySchema,
        idempotent: true,
        success: {
          status: 200,
          schema: 'GroupParticipantsChanged',
          description: "Each participant's outcome.",
        },
        errors: [404, 409, 413, 502, 504],
      }),
    ),
    leave: withId(
      operation({
        ...base,
        summary: 'Leave a group',
        description:
          'The account leaves the group (it stays for the others). 404 when the account is not in it.',
        idempotent: true,
        success: { status: 200, schema: 'GroupLeft', description: 'Left.' },
        errors: [404, 409, 502, 504],
      }),
    ),
  };
}
