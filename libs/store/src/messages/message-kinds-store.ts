import { randomBytes, randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import {
  BULL_PREFIX,
  keys,
  kindFieldsOf,
  sendQueueName,
  type ContactIdentity,
  type MessageContent,
  type MessageKindContent,
  type MessageKindFields,
  type MessageReactionEventData,
  type PollInput,
  type PollTallyEntry,
  type PollVoteEntry,
  type PollVoteEventData,
  type ReceivedReaction,
  type SendJobData,
} from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import { eventSealContext } from '../events/event-publish.js';
import { storeScript } from '../lua.js';
import type { Sealer } from '../encryption/sealer.js';

/** The record's fields of the kinds: the request's kind fields, a poll's secret, votes, reactions. */
export const KIND_FIELDS = {
  body: 'kindBody',
  pollSecret: 'pollSecret',
  votePrefix: 'vote:',
  reactionPrefix: 'reaction:',
  revises: 'revises',
} as const;

/**
 * What an edit or a delete for everyone of ours changes (`revises` on its own record, sealed): the
 * message it targets and, for an edit, the new text. The admin API's views name it ("Edit of …");
 * the public GET /messages/:id keeps the spec's shape without it.
 */
export interface RevisionOfRecord {
  messageId: string;
  action: 'edit' | 'delete';
  text?: string;
}

/**
 * Contacts whose votes or reactions one record keeps (a 1:1 chat has one; a bound all the same).
 * `lua/message-kind-apply-5.lua` holds MAX_PER_RECORD + 64 (320).
 */
const MAX_PER_RECORD = 256;

/**
 * Applies a vote or reaction once (WhatsApp redelivers after a reconnect), on a record that exists
 * (never recreating an expired one), and emits its event (`lua/message-kind-apply-5.lua`, which
 * bounds the record's fields at MAX_PER_RECORD + 64).
 */
const APPLY = storeScript<number>('message-kind-apply-5');

/** Writes the field only on a record that exists (HSETNX for the poll secret: the first one stays). */
const KEEP = storeScript<number>('message-kind-keep-1');

/** A poll of ours as a vote on it needs it: our messageId, the poll, its secret. */
export interface PollOfRecord {
  messageId: string;
  poll: PollInput;
  secret: Buffer;
}

/** A vote to record: who, what (option names, [] withdraws), when, its WhatsApp id. */
export interface VoteInput {
  contact: ContactIdentity;
  options: string[];
  at: Date;
  platformMessageId: string;
}

/** A reaction a contact sent: on which message, who, what (`""` removes), when, its WhatsApp id. */
export interface ReactionReceived {
  targetPlatformMessageId: string;
  contact: ContactIdentity;
  emoji: string;
  at: Date;
  platformMessageId: string;
}

/**
 * The message kinds on message records (`keys.message`): the request's kind fields (`kindBody`,
 * sealed JSON in the request's shape), a poll's secret (sealed), each contact's vote
 * (`vote:<contact>`, sealed) and reaction (`reaction:<contact>`, sealed). Votes and reactions
 * from contacts also become events (sealed until delivered, like message.received).
 */
export class MessageKindStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
    private readonly retentionSeconds: number,
  ) {}

  /** Keeps the kind fields of a claimed message on its record (in the request's shape). */
  async keep(deviceId: string, messageId: string, content: MessageKindContent): Promise<void> {
    const fields = kindFieldsOf(content);
    if (Object.keys(fields).length === 0) return;
    const key = keys.message(deviceId, messageId);
    const sealed = this.sealer.sealText(JSON.stringify(fields), storageContext(key, KIND_FIELDS.body));
    await KEEP.run(this.redis, [key], [KIND_FIELDS.body, sealed, '0']);
  }

  /** Keeps what a claimed edit or delete changes on its own record (sealed; the first one stays). */
  async keepRevision(deviceId: string, messageId: string, revision: RevisionOfRecord): Promise<void> {
    const key = keys.message(deviceId, messageId);
    const sealed = this.sealer.sealText(JSON.stringify(revision), storageContext(key, KIND_FIELDS.revises));
    await KEEP.run(this.redis, [key], [KIND_FIELDS.revises, sealed, '1']);
  }

  /** What an edit or delete of ours changes, from its record's fields; undefined for other records. */
  revisionOf(
    deviceId: string,
    messageId: string,
    record: Record<string, string>,
  ): RevisionOfRecord | undefined {
    const sealed = record[KIND_FIELDS.revises];
    if (!sealed) return undefined;
    const key = keys.message(deviceId, messageId);
    return JSON.parse(
      this.sealer.openText(sealed, storageContext(key, KIND_FIELDS.revises)),
    ) as RevisionOfRecord;
  }

  /**
   * The poll's secret (WhatsApp's `messageSecret`, which votes are encrypted with): made once and
   * kept sealed on the record, so a retry of the poll carries the same one. The record exists
   * (the message is claimed).
   */
  async pollSecret(deviceId: string, messageId: string): Promise<Buffer> {
    const key = keys.message(deviceId, messageId);
    const context = storageContext(key, KIND_FIELDS.pollSecret);
    const fresh = this.sealer.sealText(randomBytes(32).toString('base64'), context);
    await KEEP.run(this.redis, [key], [KIND_FIELDS.pollSecret, fresh, '1']);
    const stored = await this.redis.hget(key, KIND_FIELDS.pollSecret);
    if (!stored) throw new Error('the poll message has no record');
    return Buffer.from(this.sealer.openText(stored, context), 'base64');
  }

  /** One of our polls by its WhatsApp id (undefined when it is not one, or gone). */
  async pollOf(deviceId: string, platformMessageId: string): Promise<PollOfRecord | undefined> {
    const messageId = await this.redis.get(keys.messageByPlatformId(deviceId, platformMessageId));
    if (!messageId) return undefined;
    const key = keys.message(deviceId, messageId);
    const [body, secret] = await this.redis.hmget(key, KIND_FIELDS.body, KIND_FIELDS.pollSecret);
    if (!body || !secret) return undefined;
    const fields = this.openBody(key, body);
    if (!fields.poll) return undefined;
    return {
      messageId,
      poll: fields.poll,
      secret: Buffer.from(
        this.sealer.openText(secret, storageContext(key, KIND_FIELDS.pollSecret)),
        'base64',
      ),
    };
  }

  /** Records a contact's vote (its latest replaces the previous) and emits poll.vote; false if seen before. */
  async recordVote(deviceId: string, messageId: string, vote: VoteInput): Promise<boolean> {
    const key = keys.message(deviceId, messageId);
    const field = KIND_FIELDS.votePrefix + contactKey(vote.contact);
    const entry: PollVoteEntry = { contact: vote.contact, options: vote.options, at: vote.at.toISOString() };
    const h = await this.redis.hgetall(key);
    const body = h[KIND_FIELDS.body];
    const fields = body ? this.openBody(key, body) : {};
    const votes = this.votesOf(key, h).filter((v) => contactKey(v.contact) !== contactKey(vote.contact));
    votes.push(entry);
    const data: PollVoteEventData = {
      deviceId,
      messageId,
      platformMessageId: vote.platformMessageId,
      contact: vote.contact,
      options: vote.options,
      tally: tallyOf(fields.poll?.options ?? [], votes),
      votedAt: entry.at,
    };
    return this.apply(deviceId, vote.platformMessageId, key, field, JSON.stringify(entry), 'poll.vote', data);
  }

  /** Records a contact's reaction on the message it names and emits message.reaction; false if seen before. */
  async recordReaction(deviceId: string, reaction: ReactionReceived): Promise<boolean> {
    const target = reaction.targetPlatformMessageId;
    const messageId =
      // A reaction's or vote's own entry there is '' (no record): `||` passes over it.
      (await this.redis.get(keys.messageByPlatformId(deviceId, target))) ||
      (await this.redis.get(keys.inboundByPlatformId(deviceId, target))) ||
      undefined;
    const at = reaction.at.toISOString();
    const data: MessageReactionEventData = {
      deviceId,
      ...(messageId ? { messageId } : {}),
      targetPlatformMessageId: target,
      platformMessageId: reaction.platformMessageId,
      contact: reaction.contact,
      emoji: reaction.emoji,
      reactedAt: at,
    };
    // An unknown message: the event still tells it (the record of a key no message has is not made).
    const key = keys.message(deviceId, messageId ?? `unknown-${randomUUID()}`);
    const field = KIND_FIELDS.reactionPrefix + contactKey(reaction.contact);
    const entry: ReceivedReaction = { contact: reaction.contact, emoji: reaction.emoji, at };
    const value = reaction.emoji === '' ? '' : JSON.stringify(entry);
    return this.apply(deviceId, reaction.platformMessageId, key, field, value, 'message.reaction', data);
  }

  /**
   * What a record shows of its kind: the request's kind fields (a poll with its tally and votes)
   * and the reactions contacts put on it. A message still queued (no record yet) shows its
   * request's kind fields, read from its job's content. `record`: the record's fields as already
   * read (`MessageStore.fields`), not read again.
   */
  async read(
    deviceId: string,
    messageId: string,
    record?: Record<string, string>,
  ): Promise<MessageKindFields> {
    const key = keys.message(deviceId, messageId);
    const h = record ?? (await this.redis.hgetall(key));
    const body = h[KIND_FIELDS.body];
    const fields: MessageKindContent = body
      ? this.openBody(key, body)
      : h.messageId
        ? {}
        : await this.queuedKindFields(deviceId, messageId);
    const { poll, ...rest } = fields;
    const out: MessageKindFields = rest;
    if (poll) {
      const votes = this.votesOf(key, h);
      out.poll = { ...poll, tally: tallyOf(poll.options, votes), votes };
    }
    const reactions = this.prefixed<ReceivedReaction>(key, h, KIND_FIELDS.reactionPrefix);
    if (reactions.length > 0) out.reactions = reactions.sort((a, b) => a.at.localeCompare(b.at));
    return out;
  }

  private async queuedKindFields(deviceId: string, messageId: string): Promise<MessageKindContent> {
    const raw = await this.redis.hget(`${BULL_PREFIX}:${sendQueueName(deviceId)}:${messageId}`, 'data');
    const job = raw ? (JSON.parse(raw) as SendJobData) : undefined;
    if (!job || job.messageId !== messageId || job.deviceId !== deviceId) return {};
    const contentKey = keys.content(deviceId, job.contentId);
    // Only a content of a kind is opened (ContentStore.stage marks it): a queued text is not.
    const [kind, body] = await this.redis.hmget(contentKey, 'kind', 'body');
    if (!kind || !body) return {};
    const content = JSON.parse(
      this.sealer.openText(body, storageContext(contentKey, 'body')),
    ) as MessageContent;
    return kindFieldsOf(content);
  }

  private async apply(
    deviceId: string,
    platformMessageId: string,
    key: string,
    field: string,
    plain: string,
    type: 'poll.vote' | 'message.reaction',
    data: PollVoteEventData | MessageReactionEventData,
  ): Promise<boolean> {
    const eventId = randomUUID();
    const value = plain === '' ? '' : this.sealer.sealText(plain, storageContext(key, field));
    const written = await APPLY.run(
      this.redis,
      [
        keys.inboundByPlatformId(deviceId, platformMessageId),
        key,
        keys.webhook(deviceId),
        keys.eventOutbox(deviceId),
        keys.eventLog(deviceId),
      ],
      [
        String(this.retentionSeconds),
        field,
        value,
        keys.eventsChannel(),
        deviceId,
        eventId,
        type,
        new Date().toISOString(),
        this.sealer.sealText(JSON.stringify(data), eventSealContext(deviceId, eventId)),
      ],
    );
    return written === 1;
  }

  private openBody(key: string, sealed: string): MessageKindContent {
    return JSON.parse(
      this.sealer.openText(sealed, storageContext(key, KIND_FIELDS.body)),
    ) as MessageKindContent;
  }

  private votesOf(key: string, h: Record<string, string>): PollVoteEntry[] {
    return this.prefixed<PollVoteEntry>(key, h, KIND_FIELDS.votePrefix).sort((a, b) =>
      a.at.localeCompare(b.at),
    );
  }

  private prefixed<T>(key: string, h: Record<string, string>, prefix: string): T[] {
    const out: T[] = [];
    for (const [field, value] of Object.entries(h)) {
      if (!field.startsWith(prefix) || out.length >= MAX_PER_RECORD) continue;
      out.push(JSON.parse(this.sealer.openText(value, storageContext(key, field))) as T);
    }
    return out;
  }
}

/** How a contact is named in a record's field: its phone when known, else its LID. */
function contactKey(contact: ContactIdentity): string {
  return contact.phone ?? contact.lid ?? 'unknown';
}

/** Votes per option (in the poll's order) from each contact's latest vote. */
export function tallyOf(options: readonly string[], votes: readonly PollVoteEntry[]): PollTallyEntry[] {
  return options.map((option) => ({
    option,
    votes: votes.filter((v) => v.options.includes(option)).length,
  }));
}
