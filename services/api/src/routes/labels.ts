import { randomInt, randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { Joi } from '@mgw/contracts';
import {
  ERRORS,
  LABEL_ERRORS,
  chatLabelBodySchema,
  chatIdSchema,
  chatStateBodySchema,
  emptyQuerySchema,
  labelChatsQuerySchema,
  labelCreateBodySchema,
  labelIdParamSchema,
  labelUpdateBodySchema,
  type LabelCommand,
  type LabelCommandResult,
} from '@mgw/contracts';
import { DeviceCommandClient, LabelStore, NOBODY_HOLDS_DEVICE } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { ApiError } from '../http/api-error.js';
import { authOf } from '../http/auth.js';
import { parse } from '../http/validation.js';
import { respond } from './respond.js';

/** How long the API waits for the device's holder (a sync of the collection, then the patch). */
const WAIT_SECONDS = 30;

type Unaddressed<C> = C extends LabelCommand ? Omit<C, 'deviceId' | 'requestId'> : never;

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
  const owners = new DeviceCommandClient(s.redis, s.bullRedis);
  const store = new LabelStore(s.redis, s.encryption);

  /** 409 when no account is linked: what the device kept went with its logout. */
  async function linked(deviceId: string): Promise<void> {
    const session = await s.sessions.get(deviceId);
    if (session.status === 'disconnected') throw new ApiError(409, ERRORS.noDevice);
  }

  async function ask(deviceId: string, command: Unaddressed<LabelCommand>): Promise<LabelCommandResult> {
    const session = await s.sessions.get(deviceId);
    if (session.status !== 'connected') throw new ApiError(409, ERRORS.noDevice);
    const reply = await owners.ask(
      { ...command, deviceId, requestId: randomUUID() } as LabelCommand,
      WAIT_SECONDS,
    );
    if (reply === NOBODY_HOLDS_DEVICE || reply?.error === 'not-connected')
      throw new ApiError(409, ERRORS.noDevice);
    if (!reply) throw new ApiError(504, LABEL_ERRORS.timeout);
    if (reply.ok && reply.data) return reply.data as LabelCommandResult;
    if (reply.error === 'no-key') throw new ApiError(409, LABEL_ERRORS.noKey);
    throw new ApiError(502, LABEL_ERRORS.failed);
  }

  const noQuery = (req: Request) => {
    if (req.url.includes('?')) parse(emptyQuerySchema, req.query);
  };
  const change = (req: Request, res: Response, run: () => Promise<unknown>) =>
    s.idempotency
      .run(req, authOf(res).tokenHash, async () => ({
        status: 200,
        body: { success: true, data: await run() },
      }))
      .then((outcome) => respond(res, outcome));

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
