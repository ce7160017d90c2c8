/**
 * `@mgw/cloud-sim`: a simulator of WhatsApp's Cloud API (Meta's Graph API) for tests and the
 * sandbox, on 127.0.0.1 and a free port by default. See README.md.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PhoneNumberConfig, TemplateConfig } from './config.js';
import { createControlApi } from './control-api.js';
import { createGraphApi } from './graph-api.js';
import type { FormDelivery, FormInput } from './forms/deliver.js';
import { CloudSim, type CloudSimConfig, type SentMessage } from './sim.js';
import type { Delivery } from './webhooks.js';

export interface CloudSimOptions extends CloudSimConfig {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface CloudSimHandle {
  /** The Graph base URL, e.g. `http://127.0.0.1:43210` (paths are `/{version}/…`). */
  url: string;
  sim: CloudSim;
  addNumber(config: PhoneNumberConfig): void;
  updateNumber(
    id: string,
    update: { qualityRating?: string; messagingLimitTier?: string; throughputPerSecond?: number },
  ): void;
  expireToken(token: string): void;
  /** A user writes to a business number (opens their 24-hour window); answers the inbound wamid. */
  inbound(
    phoneNumberId: string,
    input: { from: string; text: string; name?: string; replyTo?: string },
  ): { id: string };
  /**
   * Delivers a form of Meta's webhook reference (`WEBHOOK_FORMS`, by name), signed, to the app's
   * subscribed callback; answers what it delivered (await `webhooksIdle()` for the deliveries).
   */
  deliverForm(phoneNumberId: string, name: string, input?: FormInput): FormDelivery;
  markStatus(
    wamid: string,
    status: 'delivered' | 'read' | 'failed',
    error?: { code?: number; title?: string; details?: string },
  ): SentMessage;
  addTemplate(template: TemplateConfig): void;
  setTemplateStatus(wabaId: string, name: string, language: string, status: string): void;
  /** Verifies (Meta's GET handshake) and subscribes the app's callback URL. */
  subscribe(appId: string, callbackUrl: string, verifyToken: string): Promise<void>;
  sent(phoneNumberId?: string): SentMessage[];
  deliveries(): Delivery[];
  /** Resolves when every queued webhook event is delivered or given up. */
  webhooksIdle(): Promise<void>;
  advanceClock(ms: number): void;
  close(): Promise<void>;
}

export async function startCloudSim(options: CloudSimOptions = {}): Promise<CloudSimHandle> {
  const host = options.host ?? '127.0.0.1';
  const sim = new CloudSim(options);
  const graph = createGraphApi(sim);
  const control = createControlApi(sim);
  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://cloud-sim');
    } catch {
      res.writeHead(400).end();
      return;
    }
    void (url.pathname.startsWith('/control/') ? control(req, res, url) : graph(req, res, url));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  sim.baseUrl = url;
  return {
    url,
    sim,
    addNumber: (config) => sim.addNumber(config),
    updateNumber: (id, update) => sim.updateNumber(id, update),
    expireToken: (token) => sim.expireToken(token),
    inbound: (id, input) => sim.inbound(id, input),
    deliverForm: (id, name, input) => sim.deliverForm(id, name, input),
    markStatus: (wamid, status, error) => sim.markStatus(wamid, status, error),
    addTemplate: (template) => void sim.addTemplate(template),
    setTemplateStatus: (wabaId, name, language, status) =>
      sim.setTemplateStatus(wabaId, name, language, status),
    subscribe: (appId, callbackUrl, verifyToken) => sim.subscribe(appId, callbackUrl, verifyToken),
    sent: (id) => sim.sent(id),
    deliveries: () => sim.webhooks.deliveries,
    webhooksIdle: () => sim.webhooks.idle(),
    advanceClock: (ms) => sim.advanceClock(ms),
    close: async () => {
      sim.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export { CloudSim, CloudSimError } from './sim.js';
export type { CloudSimConfig, MessageStatus, PairRate, SentMessage } from './sim.js';
export { MEDIA_LIMITS, MEDIA_MIME_TYPES, type StoredMedia } from './media.js';
export type {
  PhoneNumberConfig,
  QualityRating,
  TemplateCategory,
  TemplateConfig,
  TemplateStatus,
} from './config.js';
export { sampleTemplates } from './config.js';
export { SANDBOX_APP_ID, SANDBOX_NUMBER, SANDBOX_VERIFY_TOKEN, subscribeWhenReady } from './sandbox.js';
export {
  GraphError,
  errors,
  TOKEN_EXPIRED_SUBCODE,
  TOKEN_INVALID_SUBCODE,
  type GraphErrorBody,
} from './errors.js';
export { SIGNATURE_HEADER, signPayload, verifySignature } from './signature.js';
export { TIER_LIMITS, type MessagingTier } from './rate.js';
export { WINDOW_MS } from './window.js';
export type { Delivery, WebhookRetry } from './webhooks.js';
export { WEBHOOK_FORMS, webhookForm, type FormGroup, type WebhookForm } from './forms/table.js';
export { userIdOf, type FormDelivery, type FormFile, type FormInput } from './forms/deliver.js';
export type { WebhookBody, WebhookChange, WebhookEntry } from './forms/context.js';
