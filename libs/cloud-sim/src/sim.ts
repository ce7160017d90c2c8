/**
 * The Cloud API simulator's state and operations, free of HTTP (server.ts maps them to Graph
 * paths, control.ts to the control API). State is in memory; the clock is `Date.now()` plus an
 * offset the control API can advance (to close a 24-hour window without waiting a day).
 */
import { randomBytes } from 'node:crypto';
import {
  QUALITY_RATINGS,
  TEMPLATE_CATEGORIES,
  TEMPLATE_STATUSES,
  sampleTemplates,
  type PhoneNumberConfig,
  type QualityRating,
  type TemplateConfig,
  type TemplateStatus,
} from './config.js';
import { GraphError, errors } from './errors.js';
import { SlidingWindowLimiter, TIER_LIMITS, UniqueRecipients, isTier } from './rate.js';
import { MEDIA_LIMITS, MediaStore, newMediaId, type StoredMedia, type UploadedFile } from './media.js';
import { validateSend, type MediaType, type SendRequest } from './validate.js';
import { envelope, inboundValue, statusValue } from './payloads.js';
import { deliverForm, type FormDelivery, type FormHost, type FormInput } from './forms/deliver.js';
import type { WebhookBody } from './forms/context.js';
import { CloudSimError } from './sim-error.js';
import { CustomerWindows } from './window.js';
import { DEFAULT_RETRY, WebhookDispatcher, type WebhookRetry } from './webhooks.js';

export interface PairRate {
  /** Messages allowed to one recipient per sliding window. Default 10. */
  limit: number;
  /** The window, ms. Default 60 000 (10 a minute: Meta's "about one every 6 seconds", with bursts). */
  windowMs: number;
}

export interface CloudSimConfig {
  numbers?: PhoneNumberConfig[];
  /** Default: `sampleTemplates()` of each configured number's WABA. */
  templates?: TemplateConfig[];
  pairRate?: Partial<PairRate>;
  /** Delays after which accepted messages turn delivered / read on their own; null (default): only on control calls. */
  autoStatuses?: { deliveredAfterMs?: number | null; readAfterMs?: number | null };
  webhookRetry?: Partial<WebhookRetry>;
  /** Upload limit per media type, bytes (default: the reference's, see MEDIA_LIMITS). */
  mediaLimits?: Partial<Record<MediaType, number>>;
}

export type MessageStatus = 'sent' | 'delivered' | 'read' | 'failed';

export interface SentMessage {
  id: string;
  phoneNumberId: string;
  to: string;
  waId: string;
  type: string;
  /** The request body as sent. */
  request: Record<string, unknown>;
  replyTo?: string;
  /** The request's `biz_opaque_callback_data`, echoed in each of its status webhooks. */
  callbackData?: string;
  /** `service` (in a window) or the template's category, lowercase (the status webhook's pricing). */
  pricingCategory: string;
  at: number;
  status: MessageStatus;
  statuses: { status: MessageStatus; at: number }[];
}

interface NumberState extends Required<Omit<PhoneNumberConfig, 'appId'>> {
  appId: string;
}

type StoredTemplate = Required<TemplateConfig>;

export { CloudSimError };

const newWamid = () => `wamid.${randomBytes(24).toString('base64url')}`;

export class CloudSim {
  private readonly numbers = new Map<string, NumberState>();
  private readonly tokens = new Map<string, { phoneNumberIds: Set<string>; expired: boolean }>();
  private readonly templates: StoredTemplate[] = [];
  private readonly media: MediaStore;
  readonly messages: SentMessage[] = [];
  private readonly windows = new CustomerWindows();
  private readonly throughput: SlidingWindowLimiter;
  private readonly pairs: SlidingWindowLimiter;
  private readonly reached = new UniqueRecipients();
  private readonly timers = new Set<NodeJS.Timeout>();
  readonly webhooks: WebhookDispatcher;
  private readonly pairRate: PairRate;
  private clockOffset = 0;
  /** Where it listens (index.ts); media URLs: `mediaOrigin` if set, else the origin asked by. */
  baseUrl = 'http://127.0.0.1';
  mediaOrigin: string | undefined;

  constructor(private readonly config: CloudSimConfig = {}) {
    this.webhooks = new WebhookDispatcher({ ...DEFAULT_RETRY, ...config.webhookRetry });
    this.media = new MediaStore({ ...MEDIA_LIMITS, ...config.mediaLimits });
    this.pairRate = { limit: 10, windowMs: 60_000, ...config.pairRate };
    this.pairs = new SlidingWindowLimiter(this.pairRate.windowMs);
    this.throughput = new SlidingWindowLimiter(1000);
    for (const number of config.numbers ?? []) this.addNumber(number);
    const wabas = [...new Set((config.numbers ?? []).map((n) => n.wabaId))];
    for (const template of config.templates ?? wabas.flatMap(sampleTemplates)) this.addTemplate(template);
  }

  now(): number {
    return Date.now() + this.clockOffset;
  }

  /** Moves the simulator's clock forward (windows, rates and timestamps read it). */
  advanceClock(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new CloudSimError(400, 'advanceMs must be a non-negative number');
    this.clockOffset += ms;
  }

  // ---- configuration -------------------------------------------------------------------------

  addNumber(config: PhoneNumberConfig): void {
    for (const key of [
      'id',
      'wabaId',
      'displayPhoneNumber',
      'verifiedName',
      'accessToken',
      'appSecret',
    ] as const)
      if (typeof config[key] !== 'string' || config[key] === '')
        throw new CloudSimError(400, `${key} is required`);
    if (!/^\d+$/.test(config.id)) throw new CloudSimError(400, 'id must be digits');
    if (this.numbers.has(config.id)) throw new CloudSimError(409, `number ${config.id} exists`);
    const appId = config.appId ?? `app-${config.wabaId}`;
    const sameApp = [...this.numbers.values()].find((n) => n.appId === appId);
    if (sameApp && sameApp.appSecret !== config.appSecret)
      throw new CloudSimError(409, `app ${appId} has another secret`);
    const state: NumberState = {
      id: config.id,
      wabaId: config.wabaId,
      displayPhoneNumber: config.displayPhoneNumber,
      verifiedName: config.verifiedName,
      qualityRating: 'GREEN',
      messagingLimitTier: 'TIER_1K',
      throughputPerSecond: 80,
      accessToken: config.accessToken,
      appId,
      appSecret: config.appSecret,
    };
    this.numbers.set(config.id, state);
    this.updateNumber(config.id, config);
    const token = this.tokens.get(config.accessToken) ?? {
      phoneNumberIds: new Set<string>(),
      expired: false,
    };
    token.phoneNumberIds.add(config.id);
    this.tokens.set(config.accessToken, token);
  }

  updateNumber(
    id: string,
    update: { qualityRating?: unknown; messagingLimitTier?: unknown; throughputPerSecond?: unknown },
  ): void {
    const number = this.requireNumber(id);
    if (update.qualityRating !== undefined) {
      if (!QUALITY_RATINGS.includes(update.qualityRating as QualityRating))
        throw new CloudSimError(400, `qualityRating must be one of ${QUALITY_RATINGS.join(', ')}`);
      number.qualityRating = update.qualityRating as QualityRating;
    }
    if (update.messagingLimitTier !== undefined) {
      if (!isTier(update.messagingLimitTier))
        throw new CloudSimError(
          400,
          `messagingLimitTier must be one of ${Object.keys(TIER_LIMITS).join(', ')}`,
        );
      number.messagingLimitTier = update.messagingLimitTier;
    }
    if (update.throughputPerSecond !== undefined) {
      const tps = update.throughputPerSecond;
      if (typeof tps !== 'number' || !Number.isInteger(tps) || tps < 1)
        throw new CloudSimError(400, 'throughputPerSecond must be a positive integer');
      number.throughputPerSecond = tps;
    }
  }

  private requireNumber(id: string): NumberState {
    const number = this.numbers.get(id);
    if (!number) throw new CloudSimError(404, `no number ${id}`);
    return number;
  }

  expireToken(token: string): void {
    const entry = this.tokens.get(token);
    if (!entry) throw new CloudSimError(404, 'no such token');
    entry.expired = true;
  }

  addTemplate(template: TemplateConfig): StoredTemplate {
    for (const key of ['wabaId', 'name', 'language'] as const)
      if (typeof template[key] !== 'string' || template[key] === '')
        throw new CloudSimError(400, `${key} is required`);
    if (!TEMPLATE_CATEGORIES.includes(template.category))
      throw new CloudSimError(400, `category must be one of ${TEMPLATE_CATEGORIES.join(', ')}`);
    const status = template.status ?? 'APPROVED';
    if (!TEMPLATE_STATUSES.includes(status))
      throw new CloudSimError(400, `status must be one of ${TEMPLATE_STATUSES.join(', ')}`);
    if (!Array.isArray(template.components)) throw new CloudSimError(400, 'components must be an array');
    if (this.findTemplate(template.wabaId, template.name, template.language))
      throw new CloudSimError(409, `template ${template.name} (${template.language}) exists`);
    const stored: StoredTemplate = { ...template, status, id: template.id ?? newMediaId() };
    this.templates.push(stored);
    return stored;
  }

  setTemplateStatus(wabaId: string, name: string, language: string, status: unknown): void {
    const template = this.findTemplate(wabaId, name, language);
    if (!template) throw new CloudSimError(404, `no template ${name} (${language})`);
    if (!TEMPLATE_STATUSES.includes(status as TemplateStatus))
      throw new CloudSimError(400, `status must be one of ${TEMPLATE_STATUSES.join(', ')}`);
    template.status = status as TemplateStatus;
  }

  private findTemplate(wabaId: string, name: string, language: string): StoredTemplate | undefined {
    return this.templates.find((t) => t.wabaId === wabaId && t.name === name && t.language === language);
  }

  // ---- Graph side ----------------------------------------------------------------------------

  /** The numbers a bearer token reaches; throws 190 for an unknown or expired token. */
  authenticate(token: string): Set<string> {
    const entry = this.tokens.get(token);
    if (!entry) throw errors.invalidToken('Invalid OAuth access token - Cannot parse access token');
    if (entry.expired) throw errors.expiredToken();
    return entry.phoneNumberIds;
  }

  /** The node an id names, if the token's numbers reach it. */
  resolve(
    id: string,
    reach: Set<string>,
  ):
    | { kind: 'number'; number: NumberState }
    | { kind: 'waba'; wabaId: string }
    | { kind: 'media'; media: StoredMedia } {
    const number = this.numbers.get(id);
    if (number && reach.has(id)) return { kind: 'number', number };
    if ([...reach].some((n) => this.numbers.get(n)?.wabaId === id)) return { kind: 'waba', wabaId: id };
    const media = this.media.get(id);
    if (media && reach.has(media.phoneNumberId)) return { kind: 'media', media };
    throw errors.unknownObject(id);
  }

  /**
   * The phone number's fields (`GET /{phone-number-id}?fields=`), as the phone numbers reference
   * names them: https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account-to-number-current-status/
   */
  numberFields(number: NumberState, fields: string[] | undefined): Record<string, unknown> {
    const all: Record<string, unknown> = {
      id: number.id,
      display_phone_number: number.displayPhoneNumber,
      verified_name: number.verifiedName,
      quality_rating: number.qualityRating,
      messaging_limit_tier: number.messagingLimitTier,
      // The reference names the levels (STANDARD: 80 messages/s, HIGH: up to 1000); the number the simulator enforces is its own field.
      throughput: { level: number.throughputPerSecond > 80 ? 'HIGH' : 'STANDARD' },
      code_verification_status: 'VERIFIED',
      name_status: 'APPROVED',
      platform_type: 'CLOUD_API',
      status: 'CONNECTED',
    };
    const chosen = fields ?? [
      'verified_name',
      'code_verification_status',
      'display_phone_number',
      'quality_rating',
      'platform_type',
      'throughput',
      'id',
    ];
    const result: Record<string, unknown> = {};
    for (const field of chosen) {
      if (!Object.hasOwn(all, field)) throw errors.unknownField(field, 'WhatsAppBusinessPhoneNumber');
      result[field] = all[field];
    }
    result.id = number.id;
    return result;
  }

  /** `POST /{phone-number-id}/messages`: validates, enforces the limits, records, answers. */
  send(number: NumberState, body: unknown): Record<string, unknown> {
    const request = validateSend(body);
    const now = this.now();
    const inWindow = this.windows.isOpen(number.id, request.waId, now);
    let pricingCategory = 'service';
    if (request.type === 'template') {
      const { name, language } = request.template!;
      const template = this.findTemplate(number.wabaId, name, language.code);
      if (!template) throw errors.templateMissing(name, language.code);
      if (template.status === 'PAUSED') throw errors.templatePaused(name);
      if (template.status !== 'APPROVED') throw errors.templateDisabled(name, template.status);
      pricingCategory = template.category.toLowerCase();
    } else if (!inWindow) {
      throw errors.reengagement();
    }
    if (request.media?.id !== undefined) this.requireMedia(number, request.media.id, request.type);
    if (!this.throughput.allows(number.id, number.throughputPerSecond, now)) throw errors.throughput();
    const pairKey = `${number.id}:${request.waId}`;
    if (!this.pairs.allows(pairKey, this.pairRate.limit, now)) throw errors.pairRate();
    const limit = TIER_LIMITS[number.messagingLimitTier];
    if (!inWindow && !this.reached.allows(number.id, request.waId, limit, now))
      throw errors.messagingLimit(limit);

    this.throughput.record(number.id, now);
    this.pairs.record(pairKey, now);
    if (!inWindow) this.reached.record(number.id, request.waId, now);
    const message = this.record(number, request, pricingCategory, now);
    void this.emitStatus(message, 'sent');
    this.scheduleAutoStatuses(message);
    return {
      messaging_product: 'whatsapp',
      contacts: [{ input: request.to, wa_id: request.waId }],
      messages: [{ id: message.id }],
    };
  }

  private requireMedia(number: NumberState, id: string, type: string): void {
    const media = this.media.get(id);
    if (!media || media.phoneNumberId !== number.id)
      throw errors.invalidParameter(
        `The parameter ${type}['id'] names no media uploaded by this number: ${id}.`,
      );
  }

  private record(
    number: NumberState,
    request: SendRequest,
    pricingCategory: string,
    now: number,
  ): SentMessage {
    const message: SentMessage = {
      id: newWamid(),
      phoneNumberId: number.id,
      to: request.to,
      waId: request.waId,
      type: request.type,
      request: request.raw,
      ...(request.replyTo ? { replyTo: request.replyTo } : {}),
      ...(request.callbackData !== undefined ? { callbackData: request.callbackData } : {}),
      pricingCategory,
      at: now,
      status: 'sent',
      statuses: [{ status: 'sent', at: now }],
    };
    this.messages.push(message);
    return message;
  }

  private scheduleAutoStatuses(message: SentMessage): void {
    const auto = this.config.autoStatuses ?? {};
    const later = (ms: number | null | undefined, status: 'delivered' | 'read') => {
      if (ms === null || ms === undefined) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (message.status !== 'failed') this.markStatus(message.id, status);
      }, ms);
      this.timers.add(timer);
    };
    later(auto.deliveredAfterMs, 'delivered');
    later(auto.readAfterMs, 'read');
  }

  /** `POST /{phone-number-id}/media`: stores the file, answers its id. */
  upload(number: NumberState, part: UploadedFile, type: string): string {
    return this.media.upload(number.id, part, type);
  }

  // ---- statuses and inbound (control side) --------------------------------------------------

  private readonly ORDER: MessageStatus[] = ['sent', 'delivered', 'read'];

  /**
   * Moves a sent message to `status`, emitting each status webhook on the way (read after sent
   * emits delivered first). Failed is allowed only while the message is `sent`; nothing goes back.
   */
  markStatus(
    wamid: string,
    status: unknown,
    error?: { code?: unknown; title?: unknown; details?: unknown },
  ): SentMessage {
    const message = this.messages.find((m) => m.id === wamid);
    if (!message) throw new CloudSimError(404, `no message ${wamid}`);
    if (status === 'failed') {
      if (message.status !== 'sent')
        throw new CloudSimError(409, `message is ${message.status}: it cannot fail`);
      const failure = new GraphError(
        400,
        typeof error?.code === 'number' ? error.code : 131026,
        typeof error?.title === 'string' ? error.title : 'Message undeliverable',
        typeof error?.details === 'string' ? error.details : 'Message Undeliverable.',
      );
      this.advance(message, 'failed', failure);
      return message;
    }
    const target = this.ORDER.indexOf(status as MessageStatus);
    if (target < 1) throw new CloudSimError(400, 'status must be delivered, read or failed');
    const current = this.ORDER.indexOf(message.status);
    if (current < 0 || current >= target)
      throw new CloudSimError(409, `message is ${message.status}: it cannot become ${String(status)}`);
    for (let i = current + 1; i <= target; i++) this.advance(message, this.ORDER[i]!);
    return message;
  }

  private advance(message: SentMessage, status: MessageStatus, failure?: GraphError): void {
    message.status = status;
    message.statuses.push({ status, at: this.now() });
    void this.emitStatus(message, status, failure);
  }

  /** A user writes to a business number: opens their window, emits the inbound webhook. */
  inbound(
    phoneNumberId: string,
    input: { from?: unknown; text?: unknown; name?: unknown; replyTo?: unknown },
  ): { id: string } {
    const number = this.requireNumber(phoneNumberId);
    const from = typeof input.from === 'string' ? input.from.replace(/\D/g, '') : '';
    if (from.length < 7 || from.length > 15) throw new CloudSimError(400, 'from must be a phone number');
    if (typeof input.text !== 'string' || input.text === '') throw new CloudSimError(400, 'text is required');
    const now = this.now();
    this.windows.inbound(number.id, from, now);
    const id = newWamid();
    const name = typeof input.name === 'string' ? input.name : from;
    const replyTo = typeof input.replyTo === 'string' ? input.replyTo : undefined;
    void this.emit(number, inboundValue(number, { id, from, name, text: input.text, at: now, replyTo }));
    return { id };
  }

  windowOpen(phoneNumberId: string, waId: string): boolean {
    return this.windows.isOpen(phoneNumberId, waId, this.now());
  }

  /** Delivers a form of the webhook reference (forms/table.ts) for the number: forms/deliver.ts. */
  deliverForm(phoneNumberId: string, name: unknown, input: FormInput = {}): FormDelivery {
    return deliverForm(this.formHost, phoneNumberId, name, input);
  }

  private readonly formHost: FormHost = {
    number: (id) => this.requireNumber(id),
    now: () => this.now(),
    sent: (wamid) => this.messages.find((m) => m.id === wamid),
    keepUserMedia: (phoneNumberId, file) => {
      const kept = this.media.receive(phoneNumberId, file);
      return { id: kept.id, type: kept.type, mimeType: kept.mimeType, sha256: kept.sha256, bytes: kept.data };
    },
    mediaUrl: (id) => `${this.baseUrl}/media-download/${id}`,
    openWindow: (phoneNumberId, waId, at) => this.windows.inbound(phoneNumberId, waId, at),
    emit: (phoneNumberId, body: WebhookBody) => {
      const number = this.requireNumber(phoneNumberId);
      void this.webhooks.send(number.appId, number.appSecret, body);
    },
  };

  // ---- webhooks ------------------------------------------------------------------------------

  async subscribe(appId: string, callbackUrl: unknown, verifyToken: unknown): Promise<void> {
    if (![...this.numbers.values()].some((n) => n.appId === appId))
      throw new CloudSimError(404, `no app ${appId}`);
    try {
      await this.webhooks.subscribe({ appId, callbackUrl, verifyToken });
    } catch (err) {
      throw new CloudSimError(400, (err as Error).message);
    }
  }

  private emitStatus(message: SentMessage, status: MessageStatus, failure?: GraphError) {
    const number = this.requireNumber(message.phoneNumberId);
    return this.emit(number, statusValue(message, status, this.now(), failure));
  }

  private emit(number: NumberState, value: Record<string, unknown>) {
    return this.webhooks.send(number.appId, number.appSecret, envelope(number, value));
  }

  // ---- reads ---------------------------------------------------------------------------------

  templatesOf(wabaId: string): StoredTemplate[] {
    return this.templates.filter((t) => t.wabaId === wabaId);
  }

  get mediaLimits(): Record<MediaType, number> {
    return this.media.limits;
  }

  sent(phoneNumberId?: string): SentMessage[] {
    return this.messages.filter((m) => phoneNumberId === undefined || m.phoneNumberId === phoneNumberId);
  }

  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.webhooks.close();
  }
}
