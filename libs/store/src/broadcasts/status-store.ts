import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { keys, STATUS_LIMITS, type ContactIdentity } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';
import { storeScript } from '../lua.js';

/** `lua/status-view-4.lua`: a viewer's view, kept once, and its `status.viewed` event. */
const VIEW = storeScript<number>('status-view-4');

/** How long a status's record outlives its day on WhatsApp (late receipts, GET /status after it). */
const RECORD_MARGIN_MS = 24 * 60 * 60_000;

/** The fields of a status record (`keys.statusRecord`). */
const FIELDS = {
  audience: 'audience',
  size: 'size',
  views: 'views',
  kind: 'kind',
  viewerPrefix: 'v:',
} as const;

/** A status record as GET /status shows it. */
export interface StoredStatus {
  messageId: string;
  /** When it is due (its `sendAt`, or when it was accepted), ms. */
  dueAt: number;
  kind: 'text' | 'image' | 'video' | 'audio';
  audienceSize: number;
  viewers: { jid: string; viewedAt: string }[];
}

/**
 * The device's status updates (docs/broadcasts.md): for each, its audience (the viewers' JIDs,
 * sealed: a revoke goes to the same list) and who opened it, and the device's index of them.
 *
 * A status's message (record, job, content) is the send pipeline's like any message's; this is
 * what a status has beside it. The record is written when the status is accepted and expires a
 * day after the status's day on WhatsApp; the index keeps the newest `STATUS_LIMITS.indexed`.
 */
export class StatusStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
  ) {}

  /** Writes a status's record and indexes it (before its message is accepted: `forget` undoes it). */
  async create(
    deviceId: string,
    messageId: string,
    audience: string[],
    dueAt: number,
    kind: StoredStatus['kind'],
  ): Promise<void> {
    const key = keys.statusRecord(deviceId, messageId);
    const index = keys.deviceStatuses(deviceId);
    const ttlMs = Math.max(0, dueAt - Date.now()) + STATUS_LIMITS.liveMs + RECORD_MARGIN_MS;
    const sealed = this.sealer.sealText(JSON.stringify(audience), storageContext(key, FIELDS.audience));
    await this.redis
      .multi()
      .hset(
        key,
        FIELDS.audience,
        sealed,
        FIELDS.size,
        String(audience.length),
        FIELDS.views,
        '0',
        FIELDS.kind,
        kind,
      )
      .pexpire(key, ttlMs)
      .zadd(index, dueAt, messageId)
      .zremrangebyrank(index, 0, -(STATUS_LIMITS.indexed + 1))
      // The index lives as long as its newest record could (a later status extends it).
      .pexpire(index, ttlMs, 'GT')
      .pexpire(index, ttlMs, 'NX')
      .exec();
  }

  /** Takes back a status whose message was refused (nothing of it was queued). */
  async forget(deviceId: string, messageId: string): Promise<void> {
    await this.redis
      .multi()
      .del(keys.statusRecord(deviceId, messageId))
      .zrem(keys.deviceStatuses(deviceId), messageId)
      .exec();
  }

  /** The viewers a status went to (a revoke of it goes to the same), or undefined once it expired. */
  async audience(deviceId: string, messageId: string): Promise<string[] | undefined> {
    const key = keys.statusRecord(deviceId, messageId);
    const sealed = await this.redis.hget(key, FIELDS.audience);
    if (!sealed) return undefined;
    return JSON.parse(this.sealer.openText(sealed, storageContext(key, FIELDS.audience))) as string[];
  }

  /** Whether `messageId` is a status of the device (its record still exists). */
  async has(deviceId: string, messageId: string): Promise<boolean> {
    return (await this.redis.exists(keys.statusRecord(deviceId, messageId))) === 1;
  }

  /** The device's statuses due since `sinceMs`, newest first, with their viewers. */
  async list(deviceId: string, sinceMs: number): Promise<StoredStatus[]> {
    const ids = await this.redis.zrevrangebyscore(
      keys.deviceStatuses(deviceId),
      '+inf',
      sinceMs,
      'WITHSCORES',
    );
    const pipeline = this.redis.pipeline();
    const entries: { messageId: string; dueAt: number }[] = [];
    for (let i = 0; i < ids.length; i += 2) {
      entries.push({ messageId: ids[i]!, dueAt: Number(ids[i + 1]) });
      pipeline.hgetall(keys.statusRecord(deviceId, ids[i]!));
    }
    const records = entries.length ? ((await pipeline.exec()) ?? []) : [];
    const out: StoredStatus[] = [];
    entries.forEach((entry, i) => {
      const fields = (records[i]?.[1] ?? {}) as Record<string, string>;
      if (fields[FIELDS.size] === undefined) return; // expired since the index was read
      const viewers = Object.entries(fields)
        .filter(([f]) => f.startsWith(FIELDS.viewerPrefix))
        .map(([f, at]) => ({ jid: f.slice(FIELDS.viewerPrefix.length), viewedAt: at }))
        .sort((a, b) => a.viewedAt.localeCompare(b.viewedAt));
      const kind = (fields[FIELDS.kind] ?? 'text') as StoredStatus['kind'];
      out.push({ ...entry, kind, audienceSize: Number(fields[FIELDS.size]), viewers });
    });
    return out;
  }

  /**
   * A viewer opened the status WhatsApp knows as `platformMessageId`: kept once per viewer, and
   * `status.viewed` emitted with it (atomically). Answers whether the view was new.
   */
  async recordView(
    deviceId: string,
    platformMessageId: string,
    view: { viewerJid: string; viewer: ContactIdentity; at: Date },
  ): Promise<'new' | 'known' | 'not_a_status'> {
    const at = view.at.toISOString();
    const data = { deviceId, platformMessageId, viewer: view.viewer, viewedAt: at };
    const outcome = await VIEW.run(
      this.redis,
      [
        keys.messageByPlatformId(deviceId, platformMessageId),
        keys.webhook(deviceId),
        keys.eventOutbox(deviceId),
        keys.eventLog(deviceId),
      ],
      [
        keys.statusRecord(deviceId, ''),
        view.viewerJid,
        at,
        keys.eventsChannel(),
        deviceId,
        randomUUID(),
        JSON.stringify(data),
      ],
    );
    return outcome === 1 ? 'new' : outcome === 0 ? 'known' : 'not_a_status';
  }
}
