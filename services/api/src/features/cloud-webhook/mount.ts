import type { RequestHandler } from 'express';
import { SIGNATURE_HEADER } from '@mgw/cloud';
import { serializeError } from '@mgw/common';
import { CLOUD_WEBHOOK_ERRORS, CLOUD_WEBHOOK_MAX_BYTES, CLOUD_WEBHOOK_PATH, keys } from '@mgw/contracts';
import { enqueueDeviceText, getDeviceState } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { feature, type BodySpec } from '../../http/route-table.js';
import { cloudWebhookOperations, cloudWebhookSchemas } from './openapi.js';
import { receiveWebhook, type ReceiveDeps } from './receive-webhook.js';
import { keepOnArrival, type KeepMediaDeps } from './keep-media.js';
import { storeOptOuts, type DeviceTexts } from './record-message.js';
import { verifyHandshake } from './verify-handshake.js';

export type CloudWebhookName = 'handshake' | 'receive';

/** Meta's bodies as they came (the signature is over the exact bytes), JSON, at most 1 MB. */
const WEBHOOK_BODY: BodySpec = {
  raw: {
    limitBytes: CLOUD_WEBHOOK_MAX_BYTES,
    tooLargeError: CLOUD_WEBHOOK_ERRORS.tooLarge,
    typeError: CLOUD_WEBHOOK_ERRORS.notJson,
    emptyError: CLOUD_WEBHOOK_ERRORS.empty,
  },
};

type WebhookServices = Uses<
  | 'cloudDevices'
  | 'messages'
  | 'inbound'
  | 'kinds'
  | 'metrics'
  | 'redis'
  | 'contents'
  | 'index'
  | 'acceptor'
  | 'config'
  | 'media'
  | 'mediaSettings'
  | 'graph'
  | 'logger'
>;

/**
 * Meta's webhooks for the install's Cloud API numbers (docs/cloud-api.md "Inbound"): one endpoint
 * outside both APIs, at `/api/cloud/v1/webhook` from the root, with no token (Meta calls it: what
 * it sends is checked by the app secret's signature instead) and no per-token limit. Its base is
 * read in one spelling like the APIs' (http/canonical-path.ts): any other is a 404.
 */
export const cloudWebhook = feature<CloudWebhookName>({
  name: 'cloud-webhook',
  routes: [
    {
      method: 'get',
      path: CLOUD_WEBHOOK_PATH,
      root: true,
      auth: 'none',
      limit: 'none',
      handler: 'handshake',
    },
    {
      method: 'post',
      path: CLOUD_WEBHOOK_PATH,
      root: true,
      auth: 'none',
      limit: 'none',
      body: WEBHOOK_BODY,
      handler: 'receive',
    },
  ],
  handlers: (s) => ({ handshake: handshakeRoute(s), receive: receiveRoute(s) }),
  operations: cloudWebhookOperations,
  schemas: cloudWebhookSchemas,
});

/** GET: the challenge alone, as plain text that no browser sniffs into markup; else 403. */
function handshakeRoute(s: Uses<'cloudDevices'>): RequestHandler {
  return async (req, res) => {
    const outcome = await verifyHandshake(s.cloudDevices, req.query as Record<string, unknown>);
    if (!outcome.ok) throw new ApiError(403, CLOUD_WEBHOOK_ERRORS.handshakeRefused);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).type('text/plain; charset=utf-8').send(outcome.challenge);
  };
}

/** POST: 401 for a bad signature, 400 for what is not Meta's JSON, else 200 (events applied or dropped). */
function receiveRoute(s: WebhookServices): RequestHandler {
  const keepDeps: KeepMediaDeps = {
    media: s.media,
    settings: s.mediaSettings,
    devices: s.cloudDevices,
    graph: s.graph,
    recorded: async (deviceId, wamid) =>
      (await s.redis.exists(keys.inboundByPlatformId(deviceId, wamid))) === 1,
    metrics: s.metrics,
    logger: s.logger,
  };
  const deps: ReceiveDeps = {
    devices: s.cloudDevices,
    statuses: { messages: s.messages, metrics: s.metrics },
    messages: {
      inbound: s.inbound,
      keep: (deviceId, arriving) => keepOnArrival(keepDeps, deviceId, arriving),
      kinds: s.kinds,
      windows: s.cloudDevices,
      optOuts: storeOptOuts(s.redis, deviceTexts(s), (err) =>
        s.logger.warn('cloud opt-out confirmation not queued', { err: serializeError(err) }),
      ),
      metrics: s.metrics,
    },
    metrics: s.metrics,
  };
  return async (req, res) => {
    const outcome = await receiveWebhook(deps, req.body as Buffer, req.get(SIGNATURE_HEADER));
    if (outcome === 'bad_signature') throw new ApiError(401, CLOUD_WEBHOOK_ERRORS.badSignature);
    if (outcome === 'malformed') throw new ApiError(400, CLOUD_WEBHOOK_ERRORS.malformed);
    // What Meta would resend for days is taken and dropped; the log says so (never the body).
    if (outcome !== 'ok') req.log.info('cloud webhook dropped', { outcome });
    res.status(200).json({ success: true });
  };
}

/**
 * A cloud device's own texts, queued as a linked device's holder queues them (enqueueDeviceText):
 * on the device's send queue, for its current link, recorded and indexed; its sender sends them.
 */
function deviceTexts(s: WebhookServices): DeviceTexts {
  return async (deviceId, to, text) => {
    const { linkGeneration } = await getDeviceState(s.redis, deviceId);
    const deps = {
      redis: s.redis,
      deviceId,
      contents: s.contents,
      index: s.index,
      queue: s.acceptor.queue(deviceId),
      linkGeneration: () => linkGeneration,
      metrics: s.metrics,
      failedRetentionSeconds: s.config.store.messageRetentionSeconds,
    };
    return enqueueDeviceText(deps, to, text, { optOutNotice: true });
  };
}
