import type { RedisClient } from '@mgw/common';
import { LABEL_LIMITS, keys, type Label, type LabelListed } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';
import { storeScript } from '../lua.js';

/**
 * The account's WhatsApp Business labels as the device learned them from app-state sync, so
 * GET /labels and GET /labels/:labelId/chats answer from Redis without asking the device's socket.
 * The sender holding the device writes it from the same `labels.edit` / `labels.association`
 * notices that make the `label.*` events, in their order. A label's name is the account's text:
 * sealed. Keys in the device's slot (`keys.labels`, `keys.labelIds`, `keys.labelChats`), bounded
 * by LABEL_LIMITS: a change past a bound is refused (the caller logs it and counts it). Owner: the
 * device's holder; removed on logout (forgetAccount, the connection service's disconnect) — no TTL,
 * it is the account's durable state.
 */
const EDIT = storeScript<number>('labels-edit-2');
const ASSOCIATE = storeScript<number>('labels-associate-2');
const FORGET = storeScript<number>('labels-forget-2');

/** What a change did: kept, or refused by which bound. */
export type LabelStoreOutcome = 'kept' | 'labels' | 'chats';

interface SealedLabel {
  name: string;
  color: number;
  predefinedId?: string;
}

export class LabelStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    private readonly limits: { labels: number; chatsPerLabel: number } = LABEL_LIMITS,
  ) {}

  /** A label created, renamed or recoloured is kept; a deleted one goes with its chats. */
  async edit(deviceId: string, label: Label): Promise<LabelStoreOutcome> {
    const key = keys.labels(deviceId);
    let sealed = '';
    if (!label.deleted) {
      const value: SealedLabel = {
        name: label.name,
        color: label.color,
        ...(label.predefinedId !== undefined ? { predefinedId: label.predefinedId } : {}),
      };
      sealed = this.sealer.sealText(JSON.stringify(value), storageContext(key, label.id));
    }
    const kept = await EDIT.run(
      this.redis,
      [key, keys.labelIds(deviceId)],
      [label.id, sealed, this.limits.labels],
    );
    return Number(kept) === 1 ? 'kept' : 'labels';
  }

  /** A chat got (`labeled`) or lost a label. */
  async associate(
    deviceId: string,
    labelId: string,
    chat: string,
    labeled: boolean,
  ): Promise<LabelStoreOutcome> {
    const kept = Number(
      await ASSOCIATE.run(
        this.redis,
        [keys.labels(deviceId), keys.labelIds(deviceId)],
        [labelId, chat, labeled ? 'add' : 'remove', this.limits.labels, this.limits.chatsPerLabel],
      ),
    );
    return kept === 1 ? 'kept' : kept === 0 ? 'labels' : 'chats';
  }

  /** The device's labels (those whose edit it saw), by id, with how many chats carry each. */
  async list(deviceId: string): Promise<LabelListed[]> {
    const key = keys.labels(deviceId);
    // Two reads whatever the number of labels: the counts are kept beside the ids.
    const [[, sealed], [, counts]] = (await this.redis
      .multi()
      .hgetall(key)
      .hgetall(keys.labelIds(deviceId))
      .exec()) as [[unknown, Record<string, string>], [unknown, Record<string, string>]];
    const out = Object.entries(sealed).map(([id, value]) =>
      this.opened(key, id, value, Number(counts[id] ?? 0)),
    );
    return out.sort((a, b) => Number(a.id) - Number(b.id) || a.id.localeCompare(b.id));
  }

  /** One label the device knows (its edit was seen), with its chat count; undefined otherwise. */
  async get(deviceId: string, labelId: string): Promise<LabelListed | undefined> {
    const key = keys.labels(deviceId);
    const [[, sealed], [, count]] = (await this.redis
      .multi()
      .hget(key, labelId)
      .hget(keys.labelIds(deviceId), labelId)
      .exec()) as [[unknown, string | null], [unknown, string | null]];
    return sealed === null ? undefined : this.opened(key, labelId, sealed, Number(count ?? 0));
  }

  /**
   * The labels a chat carries, by id: one ZSCORE per label the device knows (at most
   * LABEL_LIMITS.labels, in one round trip), no index of its own to keep in step.
   */
  async ofChat(deviceId: string, chat: string): Promise<Omit<LabelListed, 'chats'>[]> {
    const labels = await this.list(deviceId);
    if (labels.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const l of labels) pipeline.zscore(keys.labelChats(deviceId, l.id), chat);
    const scores = (await pipeline.exec()) ?? [];
    return labels
      .filter((_, i) => scores[i]?.[1] !== null && scores[i]?.[1] !== undefined)
      .map(({ chats: _chats, ...label }) => label);
  }

  /**
   * The ids of the labels (those whose edit the device saw) each of `chats` carries: one HKEYS,
   * then one ZMSCORE per label (at most LABEL_LIMITS.labels), in one round trip.
   */
  async ofChats(deviceId: string, chats: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map(chats.map((c) => [c, [] as string[]]));
    if (chats.length === 0) return out;
    const ids = (await this.redis.hkeys(keys.labels(deviceId))).sort(
      (a, b) => Number(a) - Number(b) || a.localeCompare(b),
    );
    if (ids.length === 0) return out;
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.zmscore(keys.labelChats(deviceId, id), ...chats);
    const scores = (await pipeline.exec()) ?? [];
    ids.forEach((id, i) => {
      const carried = (scores[i]?.[1] ?? []) as (string | null)[];
      carried.forEach((score, j) => {
        if (score !== null) out.get(chats[j]!)?.push(id);
      });
    });
    return out;
  }

  /**
   * A page of a label's chats in lexical order after `after`; undefined for a label the device
   * does not know (never saw its edit). `next` is the cursor of the following page, if any.
   */
  async chats(
    deviceId: string,
    labelId: string,
    page: { limit: number; after?: string },
  ): Promise<{ chats: string[]; next: string | null } | undefined> {
    const [[, known], [, chats]] = (await this.redis
      .multi()
      .hexists(keys.labels(deviceId), labelId)
      .zrangebylex(
        keys.labelChats(deviceId, labelId),
        page.after === undefined ? '-' : `(${page.after}`,
        '+',
        'LIMIT',
        0,
        page.limit + 1,
      )
      .exec()) as [[unknown, number], [unknown, string[]]];
    if (Number(known) !== 1) return undefined;
    const more = chats.length > page.limit;
    const shown = more ? chats.slice(0, page.limit) : chats;
    return { chats: shown, next: more ? shown[shown.length - 1]! : null };
  }

  /** A label as kept (its sealed JSON), opened. */
  private opened(key: string, id: string, sealed: string, chats: number): LabelListed {
    const label = JSON.parse(this.sealer.openText(sealed, storageContext(key, id))) as SealedLabel;
    return {
      id,
      name: label.name,
      color: label.color,
      ...(label.predefinedId !== undefined ? { predefinedId: label.predefinedId } : {}),
      chats,
    };
  }
}

/** Everything the device keeps of the account's labels is removed (logout). */
export async function forgetLabels(redis: RedisClient, deviceId: string): Promise<void> {
  await FORGET.run(redis, [keys.labels(deviceId), keys.labelIds(deviceId)], []);
}
