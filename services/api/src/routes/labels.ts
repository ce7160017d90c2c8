import { randomInt } from 'node:crypto';
import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import {
  ERRORS,
  LABEL_ERRORS,
  chatLabelBodySchema,
  chatIdSchema,
  chatStateBodySchema,
  labelChatsQuerySchema,
  labelCreateBodySchema,
  labelIdParamSchema,
  labelUpdateBodySchema,
  type LabelCommand,
  type LabelCommandResult,
} from '@mgw/contracts';
import { DeviceCommandClient, LabelStore } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { askHolder, type Unaddressed } from '../features/holder/ask-holder.js';
import { ApiError } from '../http/api-error.js';
import { authOf } from '../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../http/holder-errors.js';
import { idempotentChange, noQuery } from '../http/route-helpers.js';
import { parse } from '../http/validation.js';

/** How a label or chat-state ask fails in HTTP (it waits the default: a sync of the collection, then the patch). */
const LABEL_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: LABEL_ERRORS.timeout },
  not_connected: NO_DEVICE,
  failed: { status: 502, error: LABEL_ERRORS.failed },
  // The phone has not shared the app-state key yet: no patch can be made.
  codes: { 'no-key': { status: 409, error: LABEL_ERRORS.noKey } },
};

const chatParams = Joi.object({ chatId: chatIdSchema });
const chatLabelParams = Joi.object({ chatId: chatIdSchema, labelId: labelIdParamSchema });
const labelParams = Joi.object({ labelId: labelIdParamSchema });

/**
 * Business labels and a chat's archive, pin and mute: app-state patches only the sender holding
 * the device can make (with the key the phone shared), so each change asks it through a device
 * command. The reads answer from Redis, where the holder keeps what app-state sync told it
 * (libs/store labels/label-store.ts): no WhatsApp query, the cost of GET /status.
 */
export function labelRoutes(s: ApiServices) {
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis), sessions: s.sessions };
  const store = new LabelStore(s.redis, s.encryption);

  /** 409 when no account is linked: what the device kept went with its logout. */
  async function linked(deviceId: string): Promise<void> {
    const session = await s.sessions.get(deviceId);
    if (session.status === 'disconnected') throw new ApiError(409, ERRORS.noDevice);
  }

  const ask = async (deviceId: string, command: Unaddressed<LabelCommand>): Promise<LabelCommandResult> =>
    answer(await askHolder<LabelCommandResult>(holder, deviceId, command), LABEL_HOLDER_ERRORS);
  const change = idempotentChange(s.idempotency);

  /** A new label; its id is the gateway's choice (digits, as WhatsApp's are). */
  const createLabel: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(labelCreateBodySchema, req.body ?? {});
    const label = {
      id: String(randomInt(100_000, 2_000_000_000)),
      name: body.name,
      color: body.color,
      deleted: false,
    };
    await change(req, res, () => ask(authOf(res).deviceId, { type: 'app-state-label', label }));
  };
  const labelChat: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId: chat } = parse(chatParams, { chatId: req.params.chatId });
    const { labelId } = parse(chatLabelBodySchema, req.body ?? {});
    await change(req, res, async () => ({
      ...(await ask(authOf(res).deviceId, { type: 'app-state-chat-label', chat, labelId, labeled: true })),
      labelId,
      labeled: true,
    }));
  };
  const unlabelChat: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId: chat, labelId } = parse(chatLabelParams, {
      chatId: req.params.chatId,
      labelId: req.params.labelId,
    });
    await change(req, res, async () => ({
      ...(await ask(authOf(res).deviceId, { type: 'app-state-chat-label', chat, labelId, labeled: false })),
      labelId,
      labeled: false,
    }));
  };
  const chatState: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId: chat } = parse(chatParams, { chatId: req.params.chatId });
    const state = parse(chatStateBodySchema, req.body ?? {});
    await change(req, res, () => ask(authOf(res).deviceId, { type: 'app-state-chat', chat, state }));
  };
  const listLabels: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = authOf(res).deviceId;
    await linked(deviceId);
    const labels = await store.list(deviceId);
    res.status(200).json({ success: true, data: { total: labels.length, labels } });
  };
  const labelChats: RequestHandler = async (req, res) => {
    const { labelId } = parse(labelParams, { labelId: req.params.labelId });
    const page = parse(labelChatsQuerySchema, req.query);
    const deviceId = authOf(res).deviceId;
    await linked(deviceId);
    const found = await store.chats(deviceId, labelId, page);
    if (!found) throw new ApiError(404, LABEL_ERRORS.unknownLabel);
    res.status(200).json({ success: true, data: { labelId, ...found } });
  };
  /** The label as the device knows it (404 for one it never saw, or deleted). */
  async function known(deviceId: string, labelId: string) {
    await linked(deviceId);
    const label = await store.get(deviceId, labelId);
    if (!label) throw new ApiError(404, LABEL_ERRORS.unknownLabel);
    return label;
  }
  /** Renamed and/or recoloured: the same label edit a create makes, with the label's id. */
  const updateLabel: RequestHandler = async (req, res) => {
    noQuery(req);
    const { labelId } = parse(labelParams, { labelId: req.params.labelId });
    const body = parse(labelUpdateBodySchema, req.body ?? {});
    const deviceId = authOf(res).deviceId;
    const current = await known(deviceId, labelId);
    const label = {
      id: labelId,
      name: body.name ?? current.name,
      color: body.color ?? current.color,
      deleted: false,
    };
    await change(req, res, () => ask(deviceId, { type: 'app-state-label', label }));
  };
  /** Deleted for the account (its chats lose it): a label edit with `deleted`. */
  const deleteLabel: RequestHandler = async (req, res) => {
    noQuery(req);
    const { labelId } = parse(labelParams, { labelId: req.params.labelId });
    const deviceId = authOf(res).deviceId;
    const current = await known(deviceId, labelId);
    const label = { id: labelId, name: current.name, color: current.color, deleted: true };
    await change(req, res, () => ask(deviceId, { type: 'app-state-label', label }));
  };
  const chatLabels: RequestHandler = async (req, res) => {
    noQuery(req);
    const { chatId } = parse(chatParams, { chatId: req.params.chatId });
    const deviceId = authOf(res).deviceId;
    await linked(deviceId);
    res.status(200).json({ success: true, data: { chatId, labels: await store.ofChat(deviceId, chatId) } });
  };
  return {
    createLabel,
    updateLabel,
    deleteLabel,
    labelChat,
    unlabelChat,
    chatState,
    listLabels,
    labelChats,
    chatLabels,
  };
}
