import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { Joi } from '@mgw/contracts';
import {
  ERRORS,
  GROUP_ERRORS,
  GROUP_INFO_ERRORS,
  emptyQuerySchema,
  groupCreateBodySchema,
  groupIdSchema,
  groupJoinBodySchema,
  groupParticipantsBodySchema,
  groupUpdateBodySchema,
  inviteCodeOf,
  type GroupCommand,
  type GroupCommandResult,
} from '@mgw/contracts';
import { DeviceCommandClient, NOBODY_HOLDS_DEVICE } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { ApiError } from '../http/api-error.js';
import { authOf } from '../http/auth.js';
import { parse } from '../http/validation.js';
import { respond } from './respond.js';

/** How long the API waits for the device's holder (a WhatsApp query, or a change of up to 50 members). */
const WAIT_SECONDS = 30;

const idParams = Joi.object({ id: groupIdSchema });

/** A group command without its addressing (each member of the union on its own). */
type Unaddressed<C> = C extends GroupCommand ? Omit<C, 'deviceId' | 'requestId'> : never;
type Ask = Unaddressed<GroupCommand>;

/**
 * The group routes: the device's groups and one group's members (from the holder's group cache),
 * create, change participants, leave. Only the sender holding the device has its WhatsApp socket,
 * so each asks it through a device command (like the number check) and answers what it replied.
 */
export function groupRoutes(s: ApiServices) {
  const owners = new DeviceCommandClient(s.redis, s.bullRedis);

  async function ask(deviceId: string, command: Ask): Promise<GroupCommandResult> {
    const session = await s.sessions.get(deviceId);
    if (session.status !== 'connected') throw new ApiError(409, ERRORS.noDevice);
    const reply = await owners.ask(
      { ...command, deviceId, requestId: randomUUID() } as GroupCommand,
      WAIT_SECONDS,
    );
    if (reply === NOBODY_HOLDS_DEVICE) throw new ApiError(409, ERRORS.noDevice);
    if (!reply) throw new ApiError(504, GROUP_ERRORS.timeout);
    if (reply.ok && reply.data) return reply.data as GroupCommandResult;
    if (reply.error === 'not-found' || reply.error === 'forbidden')
      throw new ApiError(404, GROUP_ERRORS.notFound);
    if (reply.error === 'not-admin') throw new ApiError(403, GROUP_INFO_ERRORS.notAdmin);
    if (reply.error === 'invite-not-found') throw new ApiError(404, GROUP_INFO_ERRORS.inviteNotFound);
    if (reply.error === 'not-connected') throw new ApiError(409, ERRORS.noDevice);
    throw new ApiError(502, GROUP_ERRORS.failed);
  }

  const noQuery = (req: Request) => {
    if (req.url.includes('?')) parse(emptyQuerySchema, req.query);
  };
  const groupId = (req: Request) => parse(idParams, { id: req.params.id }).id;
  /** A change goes through the Idempotency-Key handling: a retried create makes one group. */
  const change = (req: Request, res: Response, run: () => Promise<unknown>) =>
    s.idempotency
      .run(req, authOf(res).tokenHash, async () => ({
        status: 200,
        body: { success: true, data: await run() },
      }))
      .then((outcome) => respond(res, outcome));

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
