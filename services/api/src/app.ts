import express, { type Express, type Response } from 'express';
import helmet from 'helmet';
import {
  CHAT_ERRORS,
  ERRORS,
  GROUP_ERRORS,
  GROUP_LIMITS,
  MAX_CONTACT_CHECK,
  MEDIA_UPLOAD_MAX_BYTES,
  STATUS_ERRORS,
  CHANNEL_ERRORS,
  STATUS_LIMITS,
  VARS_LIMITS,
} from '@mgw/contracts';
import { errorMiddleware, methodNotAllowed, notFoundHandler } from './http/api-error.js';
import { mountAdminApi } from './admin/admin-api.js';
import { mountDashboard } from './admin/dashboard-static.js';
import type { ApiServices } from './api-services.js';
import { authenticate } from './http/auth.js';
import { jsonBody, noBody } from './http/body.js';
import { httpMetrics } from './http/metrics.js';
import { createRateLimiters } from './http/rate-limits.js';
import { SendRateLimit } from './http/send-rate-limit.js';
import { requestContext } from './http/request-context.js';
import { connectRoute, disconnectRoute, statusRoute } from './routes/connection.js';
import { batchRoute, controlBatchRoute, listBatchesRoute } from './routes/batches.js';
import { chatRoutes } from './routes/chats.js';
import { contactCheckRoute } from './routes/contacts.js';
import { getEventBrokersRoute, putEventBrokersRoute } from './routes/event-brokers.js';
import { eventStreamRoute, eventsRoute } from './routes/events.js';
import { eventSocketRoute, tokenFromSubprotocol } from './events/event-socket.js';
import { groupRoutes } from './routes/groups.js';
import { mountAccountRoutes } from './routes/account-mount.js';
import { labelRoutes } from './routes/labels.js';
import { mediaRoute } from './routes/media.js';
import {
  deleteMediaRoute,
  getMediaRoute,
  getMediaSettingsRoute,
  putMediaSettingsRoute,
  uploadMediaRoute,
} from './routes/media-objects.js';
import { rawBody } from './http/raw-body.js';
import { listMessagesRoute, messageRoute } from './routes/messages.js';
import { opsRoute } from './routes/ops.js';
import { otpRoute } from './routes/otp.js';
import { sendRoute } from './routes/send.js';
import { statusRoutes } from './routes/statuses.js';
import { channelRoutes } from './routes/channels.js';
import { deleteWebhookRoute, getWebhookRoute, putWebhookRoute } from './routes/webhook.js';
import { mountDocs, openApiRoute } from './openapi/docs-page.js';
import { mcpRoute } from './mcp/mcp-route.js';

export const API_BASE = '/api/messenger/v1';

/**
 * A 10 MB attachment is ~13.4 MiB of base64; with the JSON around it 15 MB is enough, and
 * anything larger is refused with 413 before it is buffered.
 */
export const SEND_BODY_LIMIT_BYTES = 15 * 1024 * 1024;
/** An OTP body is a phone number, a code and a language: 4 KB is plenty. */
export const OTP_BODY_LIMIT_BYTES = 4 * 1024;
/** Our bodies nest two levels (`{ attachment: {…} }`, `{ to: […] }`); 8 leaves room and refuses hostile JSON. */
export const MAX_JSON_DEPTH = 8;
/** A webhook body is a URL and a list of at most seven event types. */
export const WEBHOOK_BODY_LIMIT_BYTES = 8 * 1024;
/** A number check is at most 1,000 numbers of at most 15 digits: 64 KB is plenty. */
export const CONTACT_CHECK_BODY_LIMIT_BYTES = 64 * 1024;
/** POST /groups and /groups/:id/participants: a subject and at most 50 members. */
export const GROUP_BODY_LIMIT_BYTES = 8 * 1024;
/** PATCH /settings: three fields, the longest a text of 1,000 characters. */
export const SETTINGS_BODY_LIMIT_BYTES = 8 * 1024;
/** An MCP message is one JSON-RPC call: a text to a list at most (a text is at most 256 KB of UTF-8). */
export const MCP_BODY_LIMIT_BYTES = 1024 * 1024;
/** Values a body may hold besides its recipient list (fields of the body and its attachment). */
const FIELD_ALLOWANCE = 64;

/**
 * helmet's default headers, worked out once: helmet() sets the same ones on every response (no
 * option here depends on the request), so they are recorded from a dry run and replayed.
 */
export function securityHeaders(): (res: Response) => void {
  const set: [string, string][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => void set.push([name, String(value)]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let done = false;
  helmet()({} as never, recorder as never, (err?: unknown) => {
    if (err) throw err;
    done = true;
  });
  if (!done || set.length === 0) throw new Error('helmet did not finish synchronously');
  return (res) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
  };
}

/**
 * The express app. Routes are registered with their full path (not a sub-router) so the route
 * template is known to the access log and metrics even when a request fails. Every versioned
 * route runs: authenticate -> its per-token limiter -> its body handling -> handler.
 */
export function createApp(s: ApiServices): Express {
  const app = express();
  app.set('trust proxy', s.config.trustProxy);
  app.set('etag', false);
  app.use(requestContext(s.logger, { headers: securityHeaders(), finished: httpMetrics(s.metrics) }));

  const auth = authenticate({ ...s, tokens: s.tokenCache });
  const limit = createRateLimiters(s);
  // /send's hits are counted by the accept script's calls that write its messages.
  const sendLimit = new SendRateLimit({
    redis: s.redis,
    limit: s.config.rateLimits.send,
    windowMs: s.config.rateLimitWindowMs,
    metrics: s.metrics,
    logger: s.logger,
  });
  const idleTimeoutMs = s.config.http.bodyIdleTimeoutMs;
  const sendBody = jsonBody({
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: s.config.maxRecipients + FIELD_ALLOWANCE,
    lists: { to: s.config.maxRecipients },
    // A personalised entry of `to`: its number and up to VARS_LIMITS.count variables.
    listItemValues: VARS_LIMITS.count + 1,
    idleTimeoutMs,
  });
  const otpBody = jsonBody({
    limitBytes: OTP_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.otpBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  const webhookBody = jsonBody({
    limitBytes: WEBHOOK_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.webhookBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  const contactCheckBody = jsonBody({
    limitBytes: CONTACT_CHECK_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.contactCheckBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: MAX_CONTACT_CHECK + FIELD_ALLOWANCE,
    lists: { phones: MAX_CONTACT_CHECK },
    idleTimeoutMs,
  });
  // A group request names at most GROUP_LIMITS.participants members and a subject.
  const groupBody = jsonBody({
    limitBytes: GROUP_BODY_LIMIT_BYTES,
    tooLargeError: GROUP_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: GROUP_LIMITS.participants + FIELD_ALLOWANCE,
    lists: { participants: GROUP_LIMITS.participants },
    idleTimeoutMs,
  });
  // A status names up to STATUS_LIMITS.audience viewers beside an attachment of up to 10 MB.
  const statusBody = jsonBody({
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: STATUS_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: STATUS_LIMITS.audience + FIELD_ALLOWANCE,
    lists: { audience: STATUS_LIMITS.audience },
    idleTimeoutMs,
  });
  // A channel's name and description, and its picture (a JPEG of up to 512 KB) as base64.
  const channelBody = jsonBody({
    limitBytes: 800 * 1024,
    tooLargeError: CHANNEL_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  // A channel post: its text, or an attachment of up to 10 MB as base64 (as /send takes it).
  const channelPostBody = jsonBody({
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  const statusSettingsBody = jsonBody({
    limitBytes: 1024,
    tooLargeError: STATUS_ERRORS.settingsBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  const settingsBody = jsonBody({
    limitBytes: SETTINGS_BODY_LIMIT_BYTES,
    tooLargeError: CHAT_ERRORS.settingsBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  // A tool call's arguments nest in `params.arguments`: its lists are not top-level fields.
  const mcpBody = jsonBody({
    limitBytes: MCP_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.mcpBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: Math.max(s.config.maxRecipients, MAX_CONTACT_CHECK) + FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  // POST /media: the file itself as the body, at most the attachment limit.
  const mediaUpload = rawBody({
    limitBytes: MEDIA_UPLOAD_MAX_BYTES,
    tooLargeError: ERRORS.mediaBodyTooLarge,
    idleTimeoutMs,
  });
  const mediaSettingsBody = jsonBody({
    limitBytes: WEBHOOK_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.mediaSettingsBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs,
  });
  const withoutBody = noBody();
  const v1 = (path: string) => `${API_BASE}${path}`;

  // The busiest route first: express tries the routes in order, and every path here is distinct.
  app.post(v1('/send'), auth, sendLimit.start, sendBody, sendRoute(s, sendLimit), sendLimit.settleErrors);
  for (const path of ['/healthz', '/readyz'] as const) {
    app.get(path, opsRoute(s, path));
    app.all(path, methodNotAllowed('GET, HEAD'));
  }

  // The API's own description needs no token (it holds nothing); registered before the catch-all.
  app.get(v1('/openapi.json'), openApiRoute(s.config));
  app.all(v1('/openapi.json'), methodNotAllowed('GET, HEAD'));
  // express answers HEAD with GET routes; a HEAD must not start a pairing.
  app.head(v1('/connect'), auth, methodNotAllowed('GET, POST'));
  app.get(v1('/connect'), auth, limit.connect, withoutBody, connectRoute(s));
  app.post(v1('/connect'), auth, limit.connect, withoutBody, connectRoute(s));
  app.post(v1('/disconnect'), auth, limit.disconnect, withoutBody, disconnectRoute(s));
  app.get(v1('/status'), auth, limit.status, statusRoute(s));
  app.post(v1('/otp'), auth, limit.otp, otpBody, otpRoute(s));
  app.get(v1('/messages'), auth, limit.messages, listMessagesRoute(s));
  app.get(v1('/messages/:id'), auth, limit.messages, messageRoute(s));
  app.get(v1('/messages/:id/media'), auth, limit.messages, mediaRoute(s));
  // The settings first: `settings` is no media id (ids are `med_…`), so the order only spares a lookup.
  app.get(v1('/media/settings'), auth, limit.messages, getMediaSettingsRoute(s));
  app.put(v1('/media/settings'), auth, limit.media, mediaSettingsBody, putMediaSettingsRoute(s));
  app.post(v1('/media'), auth, limit.media, mediaUpload, uploadMediaRoute(s));
  app.get(v1('/media/:id'), auth, limit.messages, getMediaRoute(s));
  app.delete(v1('/media/:id'), auth, limit.media, withoutBody, deleteMediaRoute(s));
  app.get(v1('/batches'), auth, limit.messages, listBatchesRoute(s));
  app.get(v1('/batches/:batchId'), auth, limit.messages, batchRoute(s));
  for (const action of ['pause', 'resume', 'cancel'] as const)
    app.post(
      v1(`/batches/:batchId/${action}`),
      auth,
      limit.messages,
      withoutBody,
      controlBatchRoute(s, action),
    );
  app.get(v1('/events'), auth, limit.messages, eventsRoute(s));
  app.get(v1('/events/stream'), auth, limit.messages, eventStreamRoute(s));
  // A WebSocket upgrade arrives here too (http/upgrade.ts): the same middleware, then the upgrade.
  app.get(v1('/events/ws'), tokenFromSubprotocol, auth, limit.messages, eventSocketRoute(s));
  app.get(v1('/events/brokers'), auth, limit.webhook, getEventBrokersRoute(s));
  app.put(v1('/events/brokers'), auth, limit.webhook, webhookBody, putEventBrokersRoute(s));
  app.post(v1('/contacts/check'), auth, limit.contacts, contactCheckBody, contactCheckRoute(s));
  const groups = groupRoutes(s);
  app.get(v1('/groups'), auth, limit.groups, groups.list);
  app.post(v1('/groups'), auth, limit.groups, groupBody, groups.create);
  app.get(v1('/groups/:id'), auth, limit.groups, groups.get);
  app.post(v1('/groups/:id/participants'), auth, limit.groups, groupBody, groups.participants);
  app.post(v1('/groups/:id/leave'), auth, limit.groups, withoutBody, groups.leave);
  mountAccountRoutes(app, s, v1, auth, limit.account, { maxDepth: MAX_JSON_DEPTH, idleTimeoutMs });
  const statuses = statusRoutes(s);
  app.post(v1('/statuses'), auth, limit.broadcasts, statusBody, statuses.post);
  app.get(v1('/statuses'), auth, limit.broadcasts, statuses.list);
  app.get(v1('/statuses/settings'), auth, limit.broadcasts, statuses.getSettings);
  app.put(v1('/statuses/settings'), auth, limit.broadcasts, statusSettingsBody, statuses.putSettings);
  app.delete(v1('/statuses/:id'), auth, limit.broadcasts, withoutBody, statuses.remove);
  const channels = channelRoutes(s);
  app.get(v1('/channels'), auth, limit.broadcasts, channels.list);
  app.post(v1('/channels'), auth, limit.broadcasts, channelBody, channels.create);
  app.get(v1('/channels/:id'), auth, limit.broadcasts, channels.get);
  app.patch(v1('/channels/:id'), auth, limit.broadcasts, channelBody, channels.update);
  app.delete(v1('/channels/:id'), auth, limit.broadcasts, withoutBody, channels.remove);
  app.post(v1('/channels/:id/follow'), auth, limit.broadcasts, withoutBody, channels.follow);
  app.post(v1('/channels/:id/unfollow'), auth, limit.broadcasts, withoutBody, channels.unfollow);
  app.post(v1('/channels/:id/posts'), auth, limit.broadcasts, channelPostBody, channels.post);
  app.get(v1('/channels/:id/posts'), auth, limit.broadcasts, channels.posts);
  app.patch(v1('/channels/:id/posts/:messageId'), auth, limit.broadcasts, channelBody, channels.editPost);
  app.delete(v1('/channels/:id/posts/:messageId'), auth, limit.broadcasts, withoutBody, channels.deletePost);
  // Chats, read receipts and the account settings (docs/chats-and-calls.md).
  const chats = chatRoutes(s);
  app.get(v1('/chats'), auth, limit.messages, chats.list);
  app.get(v1('/chats/:chatId/messages'), auth, limit.messages, chats.messages);
  app.post(v1('/chats/:chatId/read'), auth, limit.messages, withoutBody, chats.readChat);
  app.post(v1('/messages/:id/read'), auth, limit.messages, withoutBody, chats.readMessage);
  app.get(v1('/settings'), auth, limit.webhook, chats.getSettings);
  app.patch(v1('/settings'), auth, limit.webhook, settingsBody, chats.patchSettings);
  app.post(v1('/groups/join'), auth, limit.groups, groupBody, groups.join);
  app.patch(v1('/groups/:id'), auth, limit.groups, groupBody, groups.update);
  app.get(v1('/groups/:id/invite'), auth, limit.groups, groups.invite);
  app.post(v1('/groups/:id/invite/revoke'), auth, limit.groups, withoutBody, groups.revokeInvite);
  // Labels and chat state share the group routes' limit: both are the account's own housekeeping.
  const labels = labelRoutes(s);
  app.get(v1('/labels'), auth, limit.groups, labels.listLabels);
  app.post(v1('/labels'), auth, limit.groups, groupBody, labels.createLabel);
  app.patch(v1('/labels/:labelId'), auth, limit.groups, groupBody, labels.updateLabel);
  app.delete(v1('/labels/:labelId'), auth, limit.groups, withoutBody, labels.deleteLabel);
  app.get(v1('/labels/:labelId/chats'), auth, limit.groups, labels.labelChats);
  app.get(v1('/chats/:chatId/labels'), auth, limit.groups, labels.chatLabels);
  app.post(v1('/chats/:chatId/labels'), auth, limit.groups, groupBody, labels.labelChat);
  app.delete(v1('/chats/:chatId/labels/:labelId'), auth, limit.groups, withoutBody, labels.unlabelChat);
  app.patch(v1('/chats/:chatId'), auth, limit.groups, groupBody, labels.chatState);
  // MCP (docs/mcp.md): each tool call goes through its route, with that route's limit and checks.
  app.post(v1('/mcp'), auth, mcpBody, mcpRoute(s.config.maxRecipients));
  app.put(v1('/webhook'), auth, limit.webhook, webhookBody, putWebhookRoute(s));
  app.get(v1('/webhook'), auth, limit.webhook, getWebhookRoute(s));
  app.delete(v1('/webhook'), auth, limit.webhook, withoutBody, deleteWebhookRoute(s));
  // A known path with another method: 405 naming the methods it serves (after the token, like a 404).
  const allowed: [string, string][] = [
    ['/connect', 'GET, POST'],
    ['/disconnect', 'POST'],
    ['/status', 'GET, HEAD'],
    ['/send', 'POST'],
    ['/otp', 'POST'],
    ['/messages', 'GET, HEAD'],
    ['/messages/:id', 'GET, HEAD'],
    ['/messages/:id/media', 'GET, HEAD'],
    ['/media', 'POST'],
    ['/media/settings', 'GET, HEAD, PUT'],
    ['/media/:id', 'GET, HEAD, DELETE'],
    ['/batches', 'GET, HEAD'],
    ['/batches/:batchId', 'GET, HEAD'],
    ['/batches/:batchId/pause', 'POST'],
    ['/batches/:batchId/resume', 'POST'],
    ['/batches/:batchId/cancel', 'POST'],
    ['/events', 'GET, HEAD'],
    ['/events/stream', 'GET, HEAD'],
    ['/events/ws', 'GET'],
    ['/events/brokers', 'GET, HEAD, PUT'],
    ['/webhook', 'GET, HEAD, PUT, DELETE'],
    ['/contacts/check', 'POST'],
    ['/groups', 'GET, HEAD, POST'],
    ['/groups/join', 'POST'],
    ['/groups/:id', 'GET, HEAD, PATCH'],
    ['/groups/:id/participants', 'POST'],
    ['/groups/:id/leave', 'POST'],
    ['/statuses', 'GET, HEAD, POST'],
    ['/statuses/settings', 'GET, HEAD, PUT'],
    ['/statuses/:id', 'DELETE'],
    ['/channels', 'GET, HEAD, POST'],
    ['/channels/:id', 'GET, HEAD, PATCH, DELETE'],
    ['/channels/:id/follow', 'POST'],
    ['/channels/:id/unfollow', 'POST'],
    ['/channels/:id/posts', 'GET, HEAD, POST'],
    ['/channels/:id/posts/:messageId', 'PATCH, DELETE'],
    ['/chats', 'GET, HEAD'],
    ['/chats/:chatId/messages', 'GET, HEAD'],
    ['/chats/:chatId/read', 'POST'],
    ['/messages/:id/read', 'POST'],
    ['/settings', 'GET, HEAD, PATCH'],
    ['/groups/:id/invite', 'GET, HEAD'],
    ['/groups/:id/invite/revoke', 'POST'],
    ['/labels', 'GET, HEAD, POST'],
    ['/labels/:labelId', 'PATCH, DELETE'],
    ['/labels/:labelId/chats', 'GET, HEAD'],
    ['/chats/:chatId/labels', 'GET, HEAD, POST'],
    ['/chats/:chatId/labels/:labelId', 'DELETE'],
    ['/chats/:chatId', 'PATCH'],
    // Stateless Streamable HTTP: no stream to open (GET) and no session to end (DELETE).
    ['/mcp', 'POST'],
  ];
  for (const [path, allow] of allowed) app.all(v1(path), auth, methodNotAllowed(allow));
  // Unknown paths under the API need a token too: without one, nothing about the API is revealed.
  app.use(API_BASE, auth, notFoundHandler);

  mountAdminApi(app, s);
  mountDashboard(app, s.config.admin);
  mountDocs(app);

  app.use(notFoundHandler);
  app.use(errorMiddleware(s.logger));
  return app;
}
