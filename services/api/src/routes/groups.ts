import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import {
  GROUP_ERRORS,
  GROUP_INFO_ERRORS,
  groupCreateBodySchema,
  groupIdSchema,
  groupJoinBodySchema,
  groupParticipantsBodySchema,
  groupUpdateBodySchema,
  inviteCodeOf,
  type GroupCommand,
  type GroupCommandResult,
} from '@mgw/contracts';
import { DeviceCommandClient } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { askHolder, type Unaddressed } from '../features/holder/ask-holder.js';
import { authOf } from '../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../http/holder-errors.js';
import { idempotentChange, noQuery } from '../http/route-helpers.js';
import { parse } from '../http/validation.js';

const idParams = Joi.object({ id: groupIdSchema });

type Ask = Unaddressed<GroupCommand>;

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

/**
 * The group routes: the device's groups and one group's members (from the holder's group cache),
 * create, change participants, leave. Only the sender holding the device has its WhatsApp socket,
 * so each asks it through a device command (like the number check) and answers what it replied.
 */
export function groupRoutes(s: ApiServices) {
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis), sessions: s.sessions };
  const ask = async (deviceId: string, command: Ask): Promise<GroupCommandResult> =>
    answer(await askHolder<GroupCommandResult>(holder, deviceId, command), GROUP_HOLDER_ERRORS);
  /** A change goes through the Idempotency-Key handling: a retried create makes one group. */
  const change = idempotentChange(s.idempotency);

  const groupId = (req: Request) => parse(idParams, { id: req.params.id }).id;

  const list: RequestHandler = async (req, res) => {
    noQuery(req);
    const data = await ask(authOf(res).deviceId, { type: 'groups-list' });
    res.status(200).json({ success: true, data });
  };
  const get: RequestHandler = async (req, res) => {
    noQuery(req);
    const id = groupId(req);
    const data = await ask(authOf(res).deviceId, { type: 'group-get', groupId: id });
    res.status(200).json({ success: true, data });
  };
  const create: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(groupCreateBodySchema, req.body ?? {});
    await change(req, res, () =>
      ask(authOf(res).deviceId, {
        type: 'group-create',
        subject: body.subject,
        participants: body.participants,
      }),
    );
  };
  const participants: RequestHandler = async (req, res) => {
    noQuery(req);
    const id = groupId(req);
    const body = parse(groupParticipantsBodySchema, req.body ?? {});
    await change(req, res, async () => ({
      id,
      action: body.action,
      ...(await ask(authOf(res).deviceId, {
        type: 'group-participants',
        groupId: id,
        action: body.action,
        participants: body.participants,
      })),
    }));
  };
  const leave: RequestHandler = async (req, res) => {
    noQuery(req);
    const id = groupId(req);
    await change(req, res, async () => {
      await ask(authOf(res).deviceId, { type: 'group-leave', groupId: id });
      return { id, left: true };
    });
  };
  /** Subject, description, announce, locked: the fields given, then the group as it is now. */
  const update: RequestHandler = async (req, res) => {
    noQuery(req);
    const id = groupId(req);
    const changes = parse(groupUpdateBodySchema, req.body ?? {});
    await change(req, res, () => ask(authOf(res).deviceId, { type: 'group-update', groupId: id, changes }));
  };
  const invite: RequestHandler = async (req, res) => {
    noQuery(req);
    const id = groupId(req);
    const data = await ask(authOf(res).deviceId, { type: 'group-invite', groupId: id, revoke: false });
    res.status(200).json({ success: true, data });
  };
  const revokeInvite: RequestHandler = async (req, res) => {
    noQuery(req);
    const id = groupId(req);
    await change(req, res, () =>
      ask(authOf(res).deviceId, { type: 'group-invite', groupId: id, revoke: true }),
    );
  };
  const join: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(groupJoinBodySchema, req.body ?? {});
    // The schema accepted it, so it has a code (a link is reduced to its code).
    const code = inviteCodeOf(body.code)!;
    await change(req, res, () => ask(authOf(res).deviceId, { type: 'group-join', code }));
  };
  return { list, get, create, participants, leave, update, invite, revokeInvite, join };
}
