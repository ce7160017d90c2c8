import type { Request, RequestHandler, Response } from 'express';
import {
  GROUP_ERRORS,
  GROUP_INFO_ERRORS,
  GROUP_LIMITS,
  Joi,
  groupCreateBodySchema,
  groupIdSchema,
  groupJoinBodySchema,
  groupParticipantsBodySchema,
  groupUpdateBodySchema,
} from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../../http/holder-errors.js';
import { deviceIdOf, idempotentChange, noQuery } from '../../http/route-helpers.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import type { DeviceHolder, HolderOutcome } from '../holder/index.js';
import { groupAdminHandlers, groupAdminRoutes, type GroupAdminName } from './admin.js';
import { changeParticipants } from './change-participants.js';
import { createGroup } from './create-group.js';
import { getGroup } from './get-group.js';
import { joinGroup } from './join-group.js';
import { leaveGroup } from './leave-group.js';
import { listGroups } from './list-groups.js';
import { groupOperations, groupSchemas } from './openapi.js';
import { readInvite } from './read-invite.js';
import { revokeInvite } from './revoke-invite.js';
import { updateGroup } from './update-group.js';

/** POST /groups and /groups/:id/participants: a subject and at most 50 members. */
export const GROUP_BODY_LIMIT_BYTES = 8 * 1024;
// A group request names at most GROUP_LIMITS.participants members and a subject.
const GROUP_BODY = {
  json: {
    limitBytes: GROUP_BODY_LIMIT_BYTES,
    tooLargeError: GROUP_ERRORS.bodyTooLarge,
    maxValues: GROUP_LIMITS.participants + FIELD_ALLOWANCE,
    lists: { participants: GROUP_LIMITS.participants },
  },
} satisfies BodySpec;

/** The public routes' handlers (their OpenAPI operations are keyed by these names). */
export type GroupName =
  'list' | 'create' | 'get' | 'participants' | 'leave' | 'join' | 'update' | 'invite' | 'revokeInvite';

/**
 * The account's groups (docs/groups.md): each change asks the sender holding the device. The
 * dashboard has the same routes for any device, named by the path (admin.ts).
 */
export const groups = feature<GroupName, GroupAdminName>({
  name: 'groups',
  routes: [
    { method: 'get', path: '/groups', limit: 'groups', handler: 'list' },
    { method: 'post', path: '/groups', limit: 'groups', body: GROUP_BODY, handler: 'create' },
    { method: 'get', path: '/groups/:id', limit: 'groups', handler: 'get' },
    {
      method: 'post',
      path: '/groups/:id/participants',
      limit: 'groups',
      body: GROUP_BODY,
      handler: 'participants',
    },
    { method: 'post', path: '/groups/:id/leave', limit: 'groups', body: 'none', handler: 'leave' },
    { method: 'post', path: '/groups/join', limit: 'groups', body: GROUP_BODY, handler: 'join' },
    { method: 'patch', path: '/groups/:id', limit: 'groups', body: GROUP_BODY, handler: 'update' },
    { method: 'get', path: '/groups/:id/invite', limit: 'groups', handler: 'invite' },
    {
      method: 'post',
      path: '/groups/:id/invite/revoke',
      limit: 'groups',
      body: 'none',
      handler: 'revokeInvite',
    },
    ...groupAdminRoutes,
  ],
  handlers: (s) => ({
    ...groupHandlers(s),
    ...groupAdminHandlers(s, groupHandlers(s, deviceIdOf), GROUP_BODY),
  }),
  operations: groupOperations,
  schemas: groupSchemas,
});

/** How a group ask fails in HTTP (it waits the default: a query, or a change of up to 50 members). */
const GROUP_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: GROUP_ERRORS.timeout },
  not_connected: NO_DEVICE,
  failed: { status: 502, error: GROUP_ERRORS.failed },
  codes: {
    'not-found': { status: 404, error: GROUP_ERRORS.notFound },
    forbidden: { status: 404, error: GROUP_ERRORS.notFound },
    'not-admin': { status: 403, error: GROUP_INFO_ERRORS.notAdmin },
    'invite-not-found': { status: 404, error: GROUP_INFO_ERRORS.inviteNotFound },
  },
};

const idParams = Joi.object({ id: groupIdSchema });
const groupIdOf = (req: Request): string => parse(idParams, { id: req.params.id }).id;

/** The holder's answer, or the contract's error for how the ask failed. */
const answered = <T>(outcome: HolderOutcome<T>): T => answer(outcome, GROUP_HOLDER_ERRORS);
const ok = (res: Response, data: unknown) => res.status(200).json({ success: true, data });

/**
 * The group handlers: each reads its request, has one use case ask the device's holder, and
 * answers what it replied. A change goes through the Idempotency-Key handling: a retried create
 * makes one group. `deviceOf` names the device: the token's (the public routes), or the path's
 * (the admin routes, admin.ts), whose Idempotency-Keys are kept per device (idempotencyScope).
 */
export function groupHandlers(
  s: Uses<'commands' | 'sessions' | 'idempotency'>,
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
) {
  const holder: DeviceHolder = { commands: s.commands, sessions: s.sessions };
  const change = idempotentChange(s.idempotency, deviceOf);
  return {
    list: async (req, res) => {
      noQuery(req);
      ok(res, answered(await listGroups(holder, deviceOf(req, res))));
    },
    get: async (req, res) => {
      noQuery(req);
      const id = groupIdOf(req);
      ok(res, answered(await getGroup(holder, deviceOf(req, res), id)));
    },
    create: async (req, res) => {
      noQuery(req);
      const body = parse(groupCreateBodySchema, req.body ?? {});
      await change(req, res, async () => answered(await createGroup(holder, deviceOf(req, res), body)));
    },
    participants: async (req, res) => {
      noQuery(req);
      const id = groupIdOf(req);
      const body = parse(groupParticipantsBodySchema, req.body ?? {});
      await change(req, res, async () =>
        answered(await changeParticipants(holder, deviceOf(req, res), id, body)),
      );
    },
    leave: async (req, res) => {
      noQuery(req);
      const id = groupIdOf(req);
      await change(req, res, async () => answered(await leaveGroup(holder, deviceOf(req, res), id)));
    },
    update: async (req, res) => {
      noQuery(req);
      const id = groupIdOf(req);
      const changes = parse(groupUpdateBodySchema, req.body ?? {});
      await change(req, res, async () =>
        answered(await updateGroup(holder, deviceOf(req, res), id, changes)),
      );
    },
    invite: async (req, res) => {
      noQuery(req);
      const id = groupIdOf(req);
      ok(res, answered(await readInvite(holder, deviceOf(req, res), id)));
    },
    revokeInvite: async (req, res) => {
      noQuery(req);
      const id = groupIdOf(req);
      await change(req, res, async () => answered(await revokeInvite(holder, deviceOf(req, res), id)));
    },
    join: async (req, res) => {
      noQuery(req);
      const { code } = parse(groupJoinBodySchema, req.body ?? {});
      await change(req, res, async () => answered(await joinGroup(holder, deviceOf(req, res), code)));
    },
  } satisfies Record<GroupName, RequestHandler>;
}

/** The handlers of the group routes, by name (the admin routes serve them too: admin.ts). */
export type GroupHandlers = ReturnType<typeof groupHandlers>;
