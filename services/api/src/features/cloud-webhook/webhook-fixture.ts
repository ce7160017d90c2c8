import { createHmac } from 'node:crypto';
import type { MessageEvent, StatusEvent } from '@mgw/cloud';
import { createMetrics, MESSAGE_STATUS_RANK, type MessageStatus, type SendJobData } from '@mgw/contracts';
import type { StatusDeps } from './apply-status.js';
import type { MessageDeps } from './record-message.js';
import type { ReceiveDeps } from './receive-webhook.js';

type MessageWrites = StatusDeps['messages'];

/**
 * The message records as MessageStore moves them, in memory, for the use cases' fast tests: a
 * record per (device, message), its job while queued, the wamid index; statuses move forward only,
 * `failed` from queued (markFailed) or from queued and sent (markFailedAfterSent), nothing out of
 * failed. Every call that moved a record is listed in `moves`.
 */
export class MemoryMessages implements MessageWrites {
  readonly records = new Map<string, Record<string, string>>();
  readonly jobs = new Map<string, SendJobData>();
  readonly wamids = new Map<string, string>();
  readonly moves: string[] = [];

  /** A message of the device sent (its record `sent`, its wamid known) or still queued. */
  add(deviceId: string, messageId: string, status: MessageStatus, wamid?: string): void {
    this.records.set(`${deviceId}/${messageId}`, {
      messageId,
      deviceId,
      status,
      ...(status !== 'queued' ? { sentAt: '2026-11-30T10:00:00.000Z' } : {}),
    });
    if (status === 'queued')
      this.jobs.set(`${deviceId}/${messageId}`, { deviceId, messageId } as SendJobData);
    if (wamid) this.wamids.set(`${deviceId}/${wamid}`, messageId);
  }

  status(deviceId: string, messageId: string): string | undefined {
    return this.records.get(`${deviceId}/${messageId}`)?.status;
  }

  fields = (deviceId: string, messageId: string) =>
    Promise.resolve({ ...this.records.get(`${deviceId}/${messageId}`) });
  job = (deviceId: string, messageId: string) => Promise.resolve(this.jobs.get(`${deviceId}/${messageId}`));
  findByPlatformId = (deviceId: string, wamid: string) =>
    Promise.resolve(this.wamids.get(`${deviceId}/${wamid}`));
  /** The wamid a `sent` status named, by message (what `markSent` was given). */
  readonly sentAs = new Map<string, string>();
  markSent = (job: SendJobData, at: Date, _traceparent?: string, platformMessageId?: string) => {
    if (platformMessageId) this.sentAs.set(job.messageId, platformMessageId);
    return this.move(job.deviceId, job.messageId, 'sent', at);
  };
  markReceipt = (deviceId: string, messageId: string, status: 'delivered' | 'read', at = new Date()) =>
    this.move(deviceId, messageId, status, at);
  markFailed = (job: SendJobData, error: string, at = new Date()) =>
    this.move(job.deviceId, job.messageId, 'failed', at, error, ['queued']);
  markFailedAfterSent = (deviceId: string, messageId: string, error: string, at = new Date()) =>
    this.move(deviceId, messageId, 'failed', at, error, ['queued', 'sent']);

  private move(
    deviceId: string,
    messageId: string,
    target: MessageStatus,
    at: Date,
    error?: string,
    failsFrom: string[] = [],
  ): Promise<boolean> {
    const record = this.records.get(`${deviceId}/${messageId}`);
    const current = (record?.status ?? 'queued') as MessageStatus;
    const moves =
      record !== undefined &&
      current !== 'failed' &&
      (target === 'failed'
        ? failsFrom.includes(current)
        : MESSAGE_STATUS_RANK[target] > MESSAGE_STATUS_RANK[current]);
    if (!moves) return Promise.resolve(false);
    record.status = target;
    record[`${target}At`] = at.toISOString();
    if (error) record.error = error;
    if (target !== 'failed') this.jobs.delete(`${deviceId}/${messageId}`);
    this.moves.push(`${messageId}:${target}${error ? `:${error}` : ''}`);
    return Promise.resolve(true);
  }
}

/** What the message deps recorded: inbound messages by wamid (once each), reactions, windows, keywords. */
export class MemoryInbound {
  readonly recorded = new Map<string, Parameters<MessageDeps['inbound']['record']>[1]>();
  readonly reactions: string[] = [];
  readonly windows = new Map<string, number>();
  readonly keywords: string[] = [];

  deps(metrics = createMetrics()): MessageDeps {
    return {
      inbound: {
        record: (deviceId, input) => {
          const key = `${deviceId}/${input.platformMessageId}`;
          if (this.recorded.has(key)) return Promise.resolve(undefined);
          this.recorded.set(key, input);
          return Promise.resolve(`in-${this.recorded.size}`);
        },
      },
      // Nothing is kept on arrival here (keep-media.test.ts: what is).
      keep: () => Promise.resolve(),
      kinds: {
        recordReaction: (deviceId, reaction) => {
          const key = `${deviceId}/${reaction.platformMessageId}`;
          if (this.reactions.includes(key)) return Promise.resolve(false);
          this.reactions.push(key);
          return Promise.resolve(true);
        },
      },
      windows: {
        keepWindow: (deviceId, waId, atMs, now = Date.now()) => {
          const key = `${deviceId}/${waId}`;
          this.windows.set(key, Math.max(this.windows.get(key) ?? 0, Math.min(atMs, now)));
          return Promise.resolve();
        },
      },
      optOuts: {
        onText: (deviceId, phone, text) => {
          if (text.trim().toUpperCase() !== 'STOP') return Promise.resolve(undefined);
          this.keywords.push(`${deviceId}/${phone}`);
          return Promise.resolve('opted_out');
        },
      },
      metrics,
    };
  }
}

export const status = (over: Partial<StatusEvent> = {}): StatusEvent => ({
  kind: 'status',
  phoneNumberId: '1001',
  wamid: 'wamid.out1',
  status: 'delivered',
  timestampMs: Date.now(),
  recipientId: '15550102000',
  ...over,
});

export const inboundText = (over: Partial<MessageEvent> = {}): MessageEvent & { from: string } =>
  ({
    kind: 'message',
    phoneNumberId: '1001',
    wamid: 'wamid.in1',
    from: '15550102000',
    timestampMs: Date.now(),
    type: 'text',
    text: 'hello',
    ...over,
  }) as MessageEvent & { from: string };

/** A cloud device per number: its id and app secret, as CloudDeviceStore answers them. */
export function memoryDevices(numbers: Record<string, { deviceId: string; appSecret: string }>) {
  const seen = new Set<string>();
  const devices: ReceiveDeps['devices'] = {
    deviceOfNumber: (phoneNumberId) => Promise.resolve(numbers[phoneNumberId]?.deviceId),
    get: (deviceId) => {
      const found = Object.entries(numbers).find(([, n]) => n.deviceId === deviceId);
      return Promise.resolve(
        found
          ? {
              phoneNumberId: found[0],
              wabaId: '2001',
              accessToken: 'token',
              appSecret: found[1].appSecret,
              verifyToken: 'verify',
              throughputPerSecond: 80,
              graphVersion: 'v21.0',
              otpTemplate: 'verification_code',
              updatedAt: '2026-11-30T00:00:00.000Z',
            }
          : undefined,
      );
    },
    firstDelivery: (digest) => Promise.resolve(!seen.has(digest) && Boolean(seen.add(digest))),
    forgetDelivery: (digest) => Promise.resolve(void seen.delete(digest)),
  };
  return devices;
}

/** `X-Hub-Signature-256` of a body with a secret. */
export const signed = (body: string, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Meta's envelope of one change of a number. */
export function envelope(phoneNumberId: string, value: Record<string, unknown>) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '2001',
        changes: [
          {
            field: 'messages',
            value: { messaging_product: 'whatsapp', metadata: { phone_number_id: phoneNumberId }, ...value },
          },
        ],
      },
    ],
  };
}
