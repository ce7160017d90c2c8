/** The channel routes and their answers in the OpenAPI document (see docs/broadcasts.md, "Channels"). */
import {
  CHANNEL_LIMITS,
  CHANNEL_POSTS_READ,
  channelCreateBodySchema,
  channelPostBodySchema,
  channelPostEditSchema,
  channelUpdateBodySchema,
  emptyQuerySchema,
  MESSAGE_ID_PATTERN,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import type { Operations } from '../../http/route-table.js';
import type { ChannelName } from './mount.js';
import { closed, messageIdString as uuid, result, str } from '../../openapi/schema-helpers.js';

const channelId = str('The channel: `<digits>@newsletter`.');
const postId = uuid('The post (its message: `GET /messages/{id}` shows it too).');

const channel = closed(
  {
    id: channelId,
    name: str('Its name.'),
    description: str('Its description (may be empty).'),
    inviteLink: str('`https://whatsapp.com/channel/<code>`: anyone with it may follow.'),
    followers: { type: 'integer', minimum: 0, description: 'How many follow it.' },
    role: {
      enum: ['owner', 'admin', 'follower', 'guest'],
      description: 'What the account is to it (`guest`: neither owns nor follows it).',
    },
    createdAt: str('When it was created (UTC).'),
    verified: { type: 'boolean', description: 'WhatsApp verified it.' },
  },
  ['id', 'name', 'description', 'followers', 'role', 'verified'],
);

export const channelSchemas: Record<string, JsonSchema> = {
  ChannelResult: result(closed({ channel }, ['channel'])),
  ChannelList: result(
    closed(
      {
        channels: {
          type: 'array',
          maxItems: CHANNEL_LIMITS.listed,
          items: closed(
            {
              id: channelId,
              name: str('Its name when the gateway last saw it.'),
              role: { enum: ['owner', 'follower'] },
              since: str('When the gateway learnt it (UTC).'),
            },
            ['id', 'name', 'role', 'since'],
          ),
        },
      },
      ['channels'],
    ),
  ),
  ChannelDeleted: result(closed({ id: channelId, deleted: { const: true } }, ['id', 'deleted'])),
  ChannelPostAccepted: result(
    closed(
      {
        messageId: postId,
        batchId: uuid('Its list of one: pause, resume or cancel it with `/batches/{batchId}/…`.'),
        channelId,
        sendAt: str('When it is scheduled (UTC).'),
      },
      ['messageId', 'batchId', 'channelId'],
    ),
  ),
  ChannelPostStats: result(
    closed(
      {
        channelId,
        posts: {
          type: 'array',
          maxItems: CHANNEL_POSTS_READ,
          items: closed(
            {
              messageId: postId,
              platformMessageId: str("WhatsApp's id of the post."),
              serverId: str('Its number in the channel (WhatsApp counts them up from the first).'),
              views: { type: 'integer', minimum: 0, description: 'How many readers viewed it.' },
              reactions: {
                type: 'object',
                additionalProperties: { type: 'integer', minimum: 1 },
                description: 'How many readers reacted with each emoji.',
              },
              postedAt: str('When it was posted (UTC).'),
            },
            ['serverId', 'views', 'reactions'],
          ),
        },
      },
      ['channelId', 'posts'],
    ),
  ),
  ChannelPostRevised: result(
    closed(
      {
        messageId: postId,
        editMessageId: uuid('The edit, a message of its own in the queue.'),
        deleteMessageId: uuid('The delete, a message of its own in the queue.'),
        status: { enum: ['editing', 'deleting', 'deleted'] },
      },
      ['messageId', 'status'],
    ),
  ),
};

const postParam = {
  name: 'messageId',
  in: 'path',
  required: true,
  description: 'The post (the `messageId` its POST answered).',
  schema: { type: 'string', pattern: MESSAGE_ID_PATTERN.source },
};

const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description:
    'The channel: its id (`<digits>@newsletter`, or the digits), or its invite link (URL-encoded) or the code at the end of it.',
  schema: { type: 'string', maxLength: 200 },
};

/** The channel routes' operations, by handler (mount.ts), built with the document's `operation`. */
export function channelOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<ChannelName> {
  const base = {
    tag: 'Broadcasts' as const,
    rateLimit: config.rateLimits.broadcasts,
    query: emptyQuerySchema,
  };
  const withId = (op: JsonSchema, ...more: unknown[]) => {
    const o = op as { parameters?: unknown[] };
    o.parameters = [idParam, ...more, ...(o.parameters ?? [])];
    return op;
  };
  const errors = [404, 409, 502, 504];
  const follow = (following: boolean) =>
    withId(
      operation({
        ...base,
        summary: following ? 'Follow a channel' : 'Unfollow a channel',
        description: following
          ? 'The account follows the channel (by its invite link or id): its posts become `channel.message` events, and it is listed by `GET /channels`.'
          : 'The account stops following the channel; it leaves `GET /channels`.',
        idempotent: true,
        success: { status: 200, schema: 'ChannelResult', description: 'The channel as it is now.' },
        errors,
      }),
    );
  return {
    list: operation({
      ...base,
      summary: "The account's channels",
      description:
        '**Choice:** WhatsApp has no query for the channels an account follows, so this lists the ones this device created or followed through the gateway (newest first, at most ' +
        `${CHANNEL_LIMITS.listed}; forgotten on logout). A channel followed on the phone appears once it is read with \`GET /channels/{id}\`.`,
      success: { status: 200, schema: 'ChannelList', description: 'The channels.' },
      errors: [],
    }),
    create: operation({
      ...base,
      summary: 'Create a channel',
      description: `A channel the account owns: \`name\` (1-${CHANNEL_LIMITS.name} characters), \`description\`, \`picture\` (a JPEG as base64, at most ${CHANNEL_LIMITS.pictureBytes / 1024} KB).`,
      body: channelCreateBodySchema,
      idempotent: true,
      success: { status: 200, schema: 'ChannelResult', description: 'The channel made.' },
      errors: [...errors, 413],
    }),
    get: withId(
      operation({
        ...base,
        summary: 'A channel',
        description:
          'Any channel by its id or invite link, as the account sees it (`role`). 404 when none has it.',
        success: { status: 200, schema: 'ChannelResult', description: 'The channel.' },
        errors,
      }),
    ),
    update: withId(
      operation({
        ...base,
        summary: 'Update a channel',
        description:
          'Changes `name`, `description` and/or `picture` (an image as base64, as for a create; `null` removes it) of a channel the account owns: 403 for a channel of someone else, 404 for none.',
        body: channelUpdateBodySchema,
        idempotent: true,
        success: { status: 200, schema: 'ChannelResult', description: 'The channel as it is now.' },
        errors: [...errors, 413],
      }),
    ),
    remove: withId(
      operation({
        ...base,
        summary: 'Delete a channel',
        description:
          'Deletes a channel the account owns, for every follower: 403 for a channel of someone else, 404 for none.',
        idempotent: true,
        success: { status: 200, schema: 'ChannelDeleted', description: 'Deleted.' },
        errors,
      }),
    ),
    follow: follow(true),
    unfollow: follow(false),
    post: withId(
      operation({
        ...base,
        summary: 'Post to a channel',
        description: [
          'A post to a channel the account owns (or administers): `text`, or an `attachment` (as `POST /send` takes it: `url`, `base64` or an uploaded `mediaId`, with its `caption`), now or at `sendAt`. 403 for a channel of someone else, 404 for none.',
          "**Choice:** it goes through the send queue as one message to the channel (`GET /messages/{id}`, `message.sent`/`failed`): sent once or failed with a reason, paced and counted as one message whatever the channel's size, held by `sendAt`, and a list of one (`batchId`) that pause, resume and cancel steer and the Campaigns page lists. A channel carries no opt-outs or blocks: its readers chose to follow it.",
        ].join('\n\n'),
        body: channelPostBodySchema,
        idempotent: true,
        success: {
          status: 202,
          schema: 'ChannelPostAccepted',
          description: 'Accepted: queued (or scheduled).',
        },
        errors: [403, ...errors, 413, 429],
      }),
    ),
    posts: withId(
      operation({
        ...base,
        summary: "A channel's latest posts, with their views and reactions",
        description: `The latest ${CHANNEL_POSTS_READ} posts of a channel the account owns, newest first, as WhatsApp counts their views and reactions (asked of WhatsApp on each call), each with the gateway's \`messageId\` when it was posted through it. 403 for a channel of someone else.`,
        success: { status: 200, schema: 'ChannelPostStats', description: 'The posts.' },
        errors: [403, ...errors],
      }),
    ),
    editPost: withId(
      operation({
        ...base,
        summary: "Edit a channel post's text",
        description:
          "The post's new `text`, for every reader: an edit queued and paced like any message (202 `editing`), within WhatsApp's edit window. 404 for no post of this channel sent through this device; 409 when it is not sent, or the window passed.",
        body: channelPostEditSchema,
        idempotent: true,
        success: { status: 202, schema: 'ChannelPostRevised', description: 'The edit is queued.' },
        errors: [404, 409, 413, 429],
      }),
      postParam,
    ),
    deletePost: withId(
      operation({
        ...base,
        summary: 'Delete a channel post',
        description:
          'A post still scheduled or queued leaves the queue at once (200 `deleted`): nothing is ever sent. A sent one is deleted for every reader by a message of its own, queued and paced like any (202 `deleting`). 404 for no post of this channel sent through this device; 409 when it failed, is being sent, or the window passed.',
        success: { status: 202, schema: 'ChannelPostRevised', description: 'The delete is queued.' },
        alsoSuccess: {
          status: 200,
          schema: 'ChannelPostRevised',
          description: 'Taken out of the queue: never sent.',
        },
        errors: [404, 409, 429],
      }),
      postParam,
    ),
  };
}
