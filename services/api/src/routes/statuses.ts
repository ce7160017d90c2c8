import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import {
  emptyQuerySchema,
  PRIORITY,
  STATUS_ERRORS,
  STATUS_ID_PATTERN,
  STATUS_JID,
  STATUS_LIMITS,
  statusBodySchema,
  statusSettingsSchema,
  type ContactIdentity,
  type StatusBody,
  type StatusSummary,
} from '@mgw/contracts';
import { readStatusSettings, writeStatusSettings } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { postStatus } from '../accept/post-status.js';
import { isRefusal } from '../accept/refusal.js';
import { reviseMessage } from '../accept/revise-message.js';
import { ApiError } from '../http/api-error.js';
import { authOf } from '../http/auth.js';
import { refusalError } from '../http/refusal-error.js';
import { parse } from '../http/validation.js';
import { respond } from '../http/respond.js';

const idParams = Joi.object({
  id: Joi.string()
    .pattern(STATUS_ID_PATTERN)
    .required()
    .messages({ 'string.pattern.base': '"id" must be a status id (the messageId POST /statuses answered)' }),
});

/** A viewer's JID as the API names contacts. */
const identityOf = (jid: string): ContactIdentity =>
  jid.endsWith('@lid') ? { lid: jid } : { phone: jid.replace(/@s\.whatsapp\.net$/, '') };

/**
 * The status routes (docs/broadcasts.md): post a status (through the send queue), the device's
 * current statuses with who viewed each, delete one (a revoke through the queue, to the same
 * viewers), and whether contacts' statuses become events.
 */
export function statusRoutes(s: ApiServices) {
  const noQuery = (req: Request) => {
    if (req.url.includes('?')) parse(emptyQuerySchema, req.query);
  };

  const post: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(statusBodySchema, req.body ?? {}) as StatusBody;
    const auth = authOf(res);
    const outcome = await s.idempotency.run(req, auth.tokenHash, async () => {
      const accepted = await postStatus(s, auth.deviceId, body);
      if (isRefusal(accepted)) throw refusalError(accepted);
      const { kind: _kind, ...data } = accepted;
      return { status: 202, body: { success: true, data } };
    });
    respond(res, outcome);
  };

  const list: RequestHandler = async (req, res) => {
    noQuery(req);
    const { deviceId } = authOf(res);
    const stored = await s.statuses.list(deviceId, Date.now() - STATUS_LIMITS.liveMs);
    const records = await Promise.all(stored.map((st) => s.messages.get(deviceId, st.messageId)));
    const statuses: StatusSummary[] = [];
    stored.forEach((st, i) => {
      const record = records[i];
      if (!record) return;
      const sentAt = record.sentAt;
      statuses.push({
        messageId: st.messageId,
        ...(record.batchId ? { batchId: record.batchId } : {}),
        status: record.status,
        kind: st.kind,
        audienceSize: st.audienceSize,
        ...(record.sendAt ? { sendAt: record.sendAt } : {}),
        ...(sentAt
          ? { sentAt, expiresAt: new Date(Date.parse(sentAt) + STATUS_LIMITS.liveMs).toISOString() }
          : {}),
        ...(record.error ? { error: record.error } : {}),
        views: st.viewers.length,
        viewers: st.viewers.map((v) => ({ viewer: identityOf(v.jid), viewedAt: v.viewedAt })),
      });
    });
    res.status(200).json({ success: true, data: { statuses } });
  };

  /**
   * A status still queued or scheduled leaves the queue at once (200, nothing is ever sent); a
   * sent one within its day is revoked for its viewers by a message of its own, queued (202).
   */
  const remove: RequestHandler = async (req, res) => {
    noQuery(req);
    const { deviceId } = authOf(res);
    const { id } = parse(idParams, { id: req.params.id });
    const record = await s.messages.get(deviceId, id);
    if (!record || record.to !== STATUS_JID || !(await s.statuses.has(deviceId, id)))
      throw new ApiError(404, STATUS_ERRORS.notFound);
    if (record.status === 'queued' || record.status === 'scheduled') {
      const outcome = await reviseMessage(s, deviceId, { to: STATUS_JID, delete: { messageId: id } });
      if (isRefusal(outcome)) throw refusalError(outcome);
      return void res.status(200).json({ success: true, data: { messageId: id, status: 'deleted' } });
    }
    if (!['sent', 'delivered', 'read'].includes(record.status))
      throw new ApiError(409, STATUS_ERRORS.notDeletable);
    if (!record.sentAt || Date.now() - Date.parse(record.sentAt) >= STATUS_LIMITS.liveMs)
      throw new ApiError(409, STATUS_ERRORS.expired);
    const audience = await s.statuses.audience(deviceId, id);
    if (!audience) throw new ApiError(409, STATUS_ERRORS.expired);
    const accepted = await s.acceptor.accept({
      deviceId,
      kind: 'send',
      recipients: [STATUS_JID],
      content: { delete: { messageId: id }, status: { audience } },
      priority: PRIORITY.send,
    });
    if (isRefusal(accepted)) throw refusalError(accepted);
    res.status(202).json({
      success: true,
      data: { messageId: id, deleteMessageId: accepted.jobs[0]!.messageId, status: 'deleting' },
    });
  };

  const getSettings: RequestHandler = async (req, res) => {
    noQuery(req);
    res.status(200).json({ success: true, data: await readStatusSettings(s.redis, authOf(res).deviceId) });
  };
  const putSettings: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(statusSettingsSchema, req.body ?? {}) as { receiveStatuses: boolean };
    await writeStatusSettings(s.redis, authOf(res).deviceId, body);
    res.status(200).json({ success: true, data: body });
  };

  return { post, list, remove, getSettings, putSettings };
}
