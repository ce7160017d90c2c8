import type { Request, RequestHandler, Response } from 'express';
import {
  ERRORS,
  GROUP_ERRORS,
  GROUP_LIMITS,
  Joi,
  LABEL_ERRORS,
  chatIdSchema,
  chatLabelBodySchema,
  chatStateBodySchema,
  labelChatsQuerySchema,
  labelCreateBodySchema,
  labelIdParamSchema,
  labelUpdateBodySchema,
} from '@mgw/contracts';
import { LabelStore } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../../http/holder-errors.js';
import { deviceIdOf, idempotentChange, noQuery } from '../../http/route-helpers.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import type { HolderFailure } from '../holder/index.js';
import { labelAdminHandlers, labelAdminRoutes, type LabelAdminName } from './admin.js';
import { createLabel } from './create-label.js';
import { deleteLabel } from './delete-label.js';
import type { LabelDeps, NotLinked, UnknownLabel } from './device-labels.js';
import { labelChat } from './label-chat.js';
import { listChatLabels } from './list-chat-labels.js';
import { listLabelChats } from './list-label-chats.js';
import { listLabels } from './list-labels.js';
import { labelOperations, labelSchemas } from './openapi.js';
import { setChatState } from './set-chat-state.js';
import { updateLabel } from './update-label.js';

/**
 * A label's name and colour, a chat's label, a chat's archive/pin/mute: small bodies, bounded as
 * the group requests' are (8 KB, the same 413 answer) since labels first shipped beside them.
 */
const labelBody: BodySpec = {
  json: {
    limitBytes: 8 * 1024,
    tooLargeError: GROUP_ERRORS.bodyTooLarge,
    maxValues: GROUP_LIMITS.participants + FIELD_ALLOWANCE,
    lists: { participants: GROUP_LIMITS.participants },
  },
};

/** The public routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type LabelName =
  | 'listLabels'
  | 'createLabel'
  | 'updateLabel'
  | 'deleteLabel'
  | 'labelChats'
  | 'chatLabels'
  | 'labelChat'
  | 'unlabelChat'
  | 'chatState';

/**
 * Business labels and a chat's archive, pin and mute (docs/labels.md): app-state patches the
 * sender holding the device makes. They share the groups' limit (RATE_LIMIT_GROUPS): both are the
 * account's own housekeeping. The admin API serves the same routes for any device (admin.ts).
 */
export const labels = feature<LabelName, LabelAdminName>({
  name: 'labels',
  routes: [
    { method: 'get', path: '/labels', limit: 'groups', handler: 'listLabels' },
    { method: 'post', path: '/labels', limit: 'groups', body: labelBody, handler: 'createLabel' },
    { method: 'patch', path: '/labels/:labelId', limit: 'groups', body: labelBody, handler: 'updateLabel' },
    { method: 'delete', path: '/labels/:labelId', limit: 'groups', body: 'none', handler: 'deleteLabel' },
    { method: 'get', path: '/labels/:labelId/chats', limit: 'groups', handler: 'labelChats' },
    { method: 'get', path: '/chats/:chatId/labels', limit: 'groups', handler: 'chatLabels' },
    { method: 'post', path: '/chats/:chatId/labels', limit: 'groups', body: labelBody, handler: 'labelChat' },
    {
      method: 'delete',
      path: '/chats/:chatId/labels/:labelId',
      limit: 'groups',
      body: 'none',
      handler: 'unlabelChat',
    },
    { method: 'patch', path: '/chats/:chatId', limit: 'groups', body: labelBody, handler: 'chatState' },
    ...labelAdminRoutes,
  ],
  handlers: (s) => ({
    ...labelRoutes(s),
    // The admin API's: the same handlers, for the device its path names.
    ...labelAdminHandlers(labelRoutes(s, deviceIdOf)),
  }),
  operations: labelOperations,
  schemas: labelSchemas,
});

/** How a label or chat-state ask fails in HTTP. */
const LABEL_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: LABEL_ERRORS.timeout },
  not_connected: NO_DEVICE,
  failed: { status: 502, error: LABEL_ERRORS.failed },
  // The phone has not shared the app-state key yet: no patch can be made.
  codes: { 'no-key': { status: 409, error: LABEL_ERRORS.noKey } },
};

type Refusal = HolderFailure | NotLinked | UnknownLabel;

/** The answer's `data`, or the contract's error for why there is none. */
function labelAnswer<T>(outcome: { ok: true; data: T } | Refusal): T {
  return outcome.ok ? outcome.data : refused(outcome);
}

/** Throws the contract's error for why a label request was refused. */
function refused(outcome: Refusal): never {
  switch (outcome.reason) {
    case 'not_linked':
      throw new ApiError(409, ERRORS.noDevice);
    case 'unknown_label':
      throw new ApiError(404, LABEL_ERRORS.unknownLabel);
    default:
      return answer<never>(outcome, LABEL_HOLDER_ERRORS);
  }
}

const chatParams = Joi.object({ chatId: chatIdSchema });
const chatLabelParams = Joi.object({ chatId: chatIdSchema, labelId: labelIdParamSchema });
const labelParams = Joi.object({ labelId: labelIdParamSchema });

/**
 * The label routes' handlers: each parses its request and runs its use case; a change goes through
 * the Idempotency-Key handling (a retried create makes one label). The admin API serves them too
 * (admin.ts), with the device named by the path: there a key is kept in the device's admin space
 * (idempotencyScope), as its callers hold no API token.
 */
function labelRoutes(
  s: Uses<'commands' | 'sessions' | 'redis' | 'encryption' | 'idempotency'>,
  /** The device a request acts on: the token's (public API), or the path's (admin API). */
  deviceOf?: (req: Request, res: Response) => string,
): Record<LabelName, RequestHandler> {
  const deps: LabelDeps = {
    holder: { commands: s.commands, sessions: s.sessions },
    sessions: s.sessions,
    store: new LabelStore(s.redis, s.encryption),
  };
  const ok = (res: Response, data: unknown) => res.status(200).json({ success: true, data });
  const device = deviceOf ?? ((_req: Request, res: Response) => authOf(res).deviceId);
  const change = idempotentChange(s.idempotency, device);

  const createLabelRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(labelCreateBodySchema, req.body ?? {});
    await change(req, res, async () => labelAnswer(await createLabel(deps, device(req, res), body)));
  };
  const labelChatRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId: chat } = parse(chatParams, { chatId: req.params.chatId });
    const { labelId } = parse(chatLabelBodySchema, req.body ?? {});
    const label = { chat, labelId, labeled: true };
    await change(req, res, async () => labelAnswer(await labelChat(deps, device(req, res), label)));
  };
  const unlabelChat: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId: chat, labelId } = parse(chatLabelParams, {
      chatId: req.params.chatId,
      labelId: req.params.labelId,
    });
    const label = { chat, labelId, labeled: false };
    await change(req, res, async () => labelAnswer(await labelChat(deps, device(req, res), label)));
  };
  const chatState: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId: chat } = parse(chatParams, { chatId: req.params.chatId });
    const state = parse(chatStateBodySchema, req.body ?? {});
    await change(req, res, async () => labelAnswer(await setChatState(deps, device(req, res), chat, state)));
  };
  const listLabelsRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    ok(res, labelAnswer(await listLabels(deps, device(req, res))));
  };
  const labelChats: RequestHandler = async (req, res) => {
    const { labelId } = parse(labelParams, { labelId: req.params.labelId });
    const page = parse(labelChatsQuerySchema, req.query);
    ok(res, labelAnswer(await listLabelChats(deps, device(req, res), labelId, page)));
  };
  const updateLabelRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    const { labelId } = parse(labelParams, { labelId: req.params.labelId });
    const body = parse(labelUpdateBodySchema, req.body ?? {});
    // The label is looked up before the Idempotency-Key is taken; the edit is made within it.
    const edit = await updateLabel(deps, device(req, res), labelId, body);
    if (!edit.ok) refused(edit);
    await change(req, res, async () => labelAnswer(await edit.apply()));
  };
  const deleteLabelRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    const { labelId } = parse(labelParams, { labelId: req.params.labelId });
    const edit = await deleteLabel(deps, device(req, res), labelId);
    if (!edit.ok) refused(edit);
    await change(req, res, async () => labelAnswer(await edit.apply()));
  };
  const chatLabels: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId } = parse(chatParams, { chatId: req.params.chatId });
    ok(res, labelAnswer(await listChatLabels(deps, device(req, res), chatId)));
  };
  return {
    createLabel: createLabelRoute,
    updateLabel: updateLabelRoute,
    deleteLabel: deleteLabelRoute,
    labelChat: labelChatRoute,
    unlabelChat,
    chatState,
    listLabels: listLabelsRoute,
    labelChats,
    chatLabels,
  };
}
