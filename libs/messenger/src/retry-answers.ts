import {
  getBinaryNodeChild,
  getBinaryNodeChildren,
  type BinaryNode,
  type proto,
  type UserFacingSocketConfig,
} from '@whiskeysockets/baileys';
import { serializeError, type Logger } from '@mgw/common';

/** A recipient's retry receipt for one of our messages: its phone could not decrypt the copy. */
export interface RetryAsk {
  platformMessageId: string;
  /** Who asks (the recipient's device JID). */
  from: string;
  /** The phone's own count of its asks for the message (`<retry count>`). */
  count: number;
  /** The receipt carried a new key bundle (a re-installed phone, or a later ask): a new session follows. */
  withKeys: boolean;
  at: Date;
}

/** What the device's owner decides and learns about retry receipts (the sender keeps them in the record). */
export interface RetryHooks {
  /** The most asks answered per message (MESSAGE_RETRY_MAX); Baileys' own per-socket cap is lifted for ours. */
  max: number;
  /** A retry receipt arrived: resolve true to re-send the message, false to refuse. */
  ask(ask: RetryAsk): Promise<boolean>;
  /** The message is being re-sent in answer to a retry receipt. */
  answered(platformMessageId: string): void;
  /** A retry could not be answered: the message's proto is gone (its retention passed). */
  unavailable?(platformMessageId: string): void;
}

/** How long an ask's decision waits for Baileys to ask for the message (it does within a moment). */
const DECISION_TTL_MS = 60_000;
/** How long Baileys' retry counts are kept (its own default cache's TTL: DEFAULT_CACHE_TTLS.MSG_RETRY). */
const COUNTER_TTL_MS = 3600_000;

/** Baileys' cache interface (not exported by name from its root). */
type CacheStore = NonNullable<UserFacingSocketConfig['msgRetryCounterCache']>;

/**
 * Answers retry receipts for our messages the gateway's way, on top of Baileys' own handling
 * (messages-recv.js `handleReceipt` → `sendMessagesAgain` → `getMessage` → `relayMessage`):
 *
 * - each `receipt type="retry"` is seen first (the socket's `CB:receipt,type:retry`, emitted
 *   before Baileys' `CB:receipt` handler runs) and its decision asked of the owner (`hooks.ask`,
 *   kept in Redis: it holds across a sender restart, where Baileys' own counters are in memory);
 * - Baileys' `getMessage` for that id waits for the decision: refused, it gets nothing (Baileys
 *   logs "message not available" and sends nothing); allowed, it gets the stored proto;
 * - that proto object, passed unchanged to `patchMessageBeforeSending` by the re-send's
 *   `relayMessage`, tells that the re-send goes now (`hooks.answered`).
 *
 * The socket must run with Baileys' recent-message cache off (`enableRecentMessageCache: false`),
 * so every retry goes through `getMessage` (the same path before and after a restart), and with
 * `counterCache` as its `msgRetryCounterCache`. Without the cache's retry manager Baileys still
 * builds a fresh session for every retry (`assertSessions(…, true)`, or from the bundle of a
 * receipt with keys).
 */
export class RetryAnswers {
  /** Decisions by WhatsApp id, oldest first, each waiting for Baileys' getMessage of that id. */
  private readonly decisions = new Map<string, Promise<boolean>[]>();
  /** Protos handed out for a re-send, to their WhatsApp id. */
  private readonly resends = new WeakMap<object, string>();

  constructor(
    private readonly hooks: RetryHooks,
    private readonly logger: Logger,
    private readonly deviceId: string,
    /**
     * Whether a JID is one of the account's own devices (its phone asking for the copy every
     * message sends it): those asks are left to Baileys and not counted against the recipient.
     */
    private readonly isOwn: (jid: string) => boolean = () => false,
  ) {}

  /** WhatsApp ids of ours that recipients asked for again (the counter cache leaves them to us). */
  private readonly ours = new Map<string, number>();
  private readonly counts = new Map<string, { value: unknown; until: number }>();

  /**
   * Baileys' `msgRetryCounterCache`. Baileys keeps one count per `<id>:<participant>` for both
   * directions: the retry receipts it sends for messages it cannot decrypt (capped at its
   * `maxMsgRetryCount`, 5 — left as they are), and the answers to ours (counted twice per
   * receipt, so in rc14 only the first two receipts of a message were answered, and forgotten on
   * restart). For our messages (ids seen in a retry receipt) it reads no count, so Baileys always
   * goes on to `getMessage`, where the gateway's bound decides.
   */
  readonly counterCache: CacheStore = {
    get: <T>(key: string): T | undefined => {
      if (this.ours.has(key.split(':')[0]!)) return undefined;
      const hit = this.counts.get(key);
      if (!hit || hit.until < Date.now()) {
        this.counts.delete(key);
        return undefined;
      }
      return hit.value as T;
    },
    set: <T>(key: string, value: T): void => {
      if (this.ours.has(key.split(':')[0]!)) return;
      if (this.counts.size > 10_000) this.sweep();
      this.counts.set(key, { value, until: Date.now() + COUNTER_TTL_MS });
    },
    del: (key: string): void => {
      this.counts.delete(key);
    },
    flushAll: (): void => {
      this.counts.clear();
    },
  };

  /** A `receipt type="retry"` arrived (before Baileys handles it). */
  onRetryReceipt(node: BinaryNode): void {
    if (this.isOwn(node.attrs.participant ?? node.attrs.from ?? '')) return;
    const retry = getBinaryNodeChild(node, 'retry');
    const ids = [
      node.attrs.id,
      ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((i) => i.attrs.id),
    ];
    for (const id of ids) {
      if (!id) continue;
      this.ours.set(id, Date.now() + COUNTER_TTL_MS);
      const ask: RetryAsk = {
        platformMessageId: id,
        from: node.attrs.participant ?? node.attrs.from ?? '',
        count: Number(retry?.attrs.count ?? 1) || 1,
        withKeys: !!getBinaryNodeChild(node, 'keys'),
        at: new Date(),
      };
      const decision = this.hooks.ask(ask).catch((err: unknown) => {
        // Redis away: answer as Baileys would (its own cap still bounds the re-sends)
        this.logger.warn('retry receipt not recorded', { deviceId: this.deviceId, err: serializeError(err) });
        return true;
      });
      const queue = this.decisions.get(id) ?? [];
      queue.push(decision);
      this.decisions.set(id, queue);
      setTimeout(() => this.drop(id, decision), DECISION_TTL_MS).unref();
    }
  }

  /** Baileys' `getMessage`: for a retry, the stored proto only when the decision allows it. */
  async getMessage(id: string, load: (id: string) => Promise<proto.IMessage | undefined>) {
    const queue = this.decisions.get(id);
    const decision = queue?.shift();
    if (queue && queue.length === 0) this.decisions.delete(id);
    // not a retry (e.g. a poll's creation message for a vote): the stored proto as ever
    if (!decision) return load(id);
    if (!(await decision)) return undefined;
    const message = await load(id);
    if (!message) {
      this.hooks.unavailable?.(id);
      return undefined;
    }
    this.resends.set(message, id);
    return message;
  }

  /** Baileys' `patchMessageBeforeSending`: unchanged; a re-send's proto is counted as answered. */
  patch(message: proto.IMessage): proto.IMessage {
    const id = this.resends.get(message);
    if (id !== undefined) {
      this.resends.delete(message);
      this.hooks.answered(id);
    }
    return message;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, hit] of this.counts) if (hit.until < now) this.counts.delete(key);
    for (const [id, until] of this.ours) if (until < now) this.ours.delete(id);
  }

  private drop(id: string, decision: Promise<boolean>): void {
    const queue = this.decisions.get(id);
    if (!queue) return;
    const index = queue.indexOf(decision);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) this.decisions.delete(id);
  }
}
