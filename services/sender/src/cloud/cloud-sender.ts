/**
 * A cloud device's sender and connection as the send path sees them (send-engine.ts): messages go
 * out through the Graph API (GraphClient, the one client of Meta's API), never through a socket.
 *
 * - The recipient is a phone number: the Cloud API has no lookup, so a number is its own JID and
 *   counts as on WhatsApp (an undeliverable number comes back as a failed status, 131026).
 * - Media is always uploaded (POST /{phone-number-id}/media), once per device and attachment,
 *   never sent by `link`: a link would make Meta fetch the client's URL itself, outside our
 *   guarded client and its policy, with the failure coming back only as a status webhook; the
 *   upload fetches it once through the guard (and the device's proxy) and a list reuses its id.
 * - Every message carries our messageId as `biz_opaque_callback_data`, so its status webhooks find
 *   the record even when the answer with the wamid was lost; the wamid becomes the record's id.
 * - A Graph answer that is an error left the message unsent (the attempt did not begin); no answer
 *   at all leaves its outcome unknown, and the message is never sent blind a second time.
 */
import { createHash } from 'node:crypto';
import type { Logger, RedisClient } from '@mgw/common';
import { FAILURE_REASONS, keys, phoneOfJid, sniffMediaKind } from '@mgw/contracts';
import type { ContactAnswer } from '@mgw/store';
import {
  GraphError,
  GraphUnreachableError,
  graphMessage,
  graphVerdict,
  hasUrl,
  type CloudContent,
  type GraphClient,
  type GraphNumber,
} from '@mgw/cloud';
import type { MediaInput } from '@mgw/messenger';
import { PermanentSendError, RetryableSendError } from '../send/send-errors.js';
import {
  HoldError,
  type EngineAttempt,
  type EngineMessage,
  type JobConnection,
  type JobSender,
} from '../send/send-engine.js';
import type { CloudRules } from './cloud-rules.js';

/** How long a media id an upload got is reused: a day bounds a URL whose bytes changed; Meta keeps it 30. */
export const CLOUD_MEDIA_TTL_SECONDS = 24 * 3600;
/** How often a message of a device whose token failed looks again (a /connect also wakes them). */
export const CLOUD_DOWN_RECHECK_MS = 60_000;

const PHONE_ONLY = 'the Cloud API sends to phone numbers only';

/** What the sender reads of its device as it is now (the runtime refreshes it). */
export interface CloudDeviceNow {
  deviceId: string;
  /** The number's ids and token, for each call. */
  number(): GraphNumber;
  /** Whether the device is connected (its token worked last time it was used or checked). */
  connected(): boolean;
  /** The token failed: the device turns `disconnected` (reason `cloud_token_expired`). */
  tokenFailed(): Promise<void>;
}

export class CloudSender implements JobSender, JobConnection {
  readonly sendsTemplates = true;
  /** Uploads in flight by cache key: a list's messages sent at once share one upload. */
  private readonly uploading = new Map<string, Promise<string>>();

  constructor(
    private readonly device: CloudDeviceNow,
    private readonly graph: GraphClient,
    private readonly rules: CloudRules,
    private readonly redis: RedisClient,
    private readonly logger: Logger,
  ) {}

  // ---- the connection -------------------------------------------------------------------------

  /** Connected or not at once: waiting changes nothing until someone connects the device again. */
  waitForOpen(): Promise<boolean> {
    return Promise.resolve(this.device.connected());
  }

  downHold(): { reason: 'device_disconnected'; until: number } | undefined {
    return this.device.connected()
      ? undefined
      : { reason: 'device_disconnected', until: Date.now() + CLOUD_DOWN_RECHECK_MS };
  }

  readonly groups = {
    assertMaySend: (): Promise<void> =>
      Promise.reject(new PermanentSendError(FAILURE_REASONS.invalidNumber, PHONE_ONLY)),
  };

  // ---- the recipient: no lookup on the Cloud API ----------------------------------------------

  lookup(phone: string): Promise<string | null> {
    return Promise.resolve(`${digits(phone)}@s.whatsapp.net`);
  }

  known(phone: string): Promise<ContactAnswer | undefined> {
    return Promise.resolve({ onWhatsApp: true, jid: `${digits(phone)}@s.whatsapp.net` });
  }

  /** No Signal keys, no presence, no edits on the Cloud API. */
  prefetchKeys(): void {}
  presence(): Promise<void> {
    return Promise.resolve();
  }
  sentText(): Promise<boolean | undefined> {
    return Promise.resolve(undefined);
  }

  // ---- the send -------------------------------------------------------------------------------

  async send(msg: EngineMessage, attempt: EngineAttempt = { began: false }): Promise<void> {
    const to = digits(msg.jid);
    const content = await this.content(msg);
    const replyTo = msg.quoted
      ? msg.quoted.fromMe
        ? msg.quoted.platformMessageId
        : msg.quoted.key.id
      : undefined;
    // A template may go to a contact outside its window: that contact counts against the tier.
    const reach = content.type === 'template' ? await this.rules.reach(to) : undefined;
    const body = graphMessage(content, {
      to,
      ...(replyTo ? { replyTo } : {}),
      ...(attempt.messageId ? { callbackData: attempt.messageId } : {}),
    });
    // From here Meta may have it, until its answer says otherwise. A second message of the
    // attempt (the text after an audio) finds it begun already: the first went, whatever happens
    // to this one, so the attempt stays begun and the message is never sent again.
    const begunBefore = attempt.began;
    attempt.began = true;
    try {
      const { wamid } = await this.graph.send(this.device.number(), body);
      attempt.platformMessageId ??= wamid;
    } catch (err) {
      if (!(err instanceof GraphUnreachableError && err.reached)) {
        attempt.began = begunBefore;
        await reach?.giveBack();
      }
      throw await this.failure(err);
    }
  }

  /** What a failed Graph call means for the message (graphVerdict); a token that failed holds it. */
  private async failure(err: unknown): Promise<Error> {
    if (err instanceof GraphUnreachableError) {
      if (!err.reached) return new RetryableSendError(FAILURE_REASONS.sendFailed, err.message);
      return new PermanentSendError(
        FAILURE_REASONS.sendOutcomeUnknown,
        'the Graph API did not answer: the message may have been sent',
      );
    }
    if (!(err instanceof GraphError)) return err instanceof Error ? err : new Error(String(err));
    const verdict = graphVerdict(err);
    const what = `Graph API error ${err.code}${err.subcode ? `/${err.subcode}` : ''}: ${err.message}`;
    if (verdict.disconnect) {
      await this.device.tokenFailed();
      return new HoldError('device_disconnected', Date.now() + CLOUD_DOWN_RECHECK_MS, what);
    }
    if (verdict.retry) return new RetryableSendError(verdict.reason, what);
    return new PermanentSendError(verdict.reason, what);
  }

  private async content(msg: EngineMessage): Promise<CloudContent> {
    if (msg.revision)
      throw new PermanentSendError(
        FAILURE_REASONS.revisionRefused,
        'the Cloud API cannot edit or delete a sent message',
      );
    if (msg.status) throw new PermanentSendError(FAILURE_REASONS.invalidNumber, PHONE_ONLY);
    if (msg.template) return { type: 'template', template: msg.template };
    const kind = msg.kind;
    if (kind?.type === 'reaction')
      return { type: 'reaction', targetWamid: kind.target.platformMessageId, emoji: kind.emoji };
    if (kind?.type === 'location') return { type: 'location', location: kind.location };
    if (kind?.type === 'contacts') return { type: 'contacts', contacts: kind.contacts };
    if (kind?.type === 'poll')
      throw new PermanentSendError(FAILURE_REASONS.rejectedByServer, 'the Cloud API has no polls');
    if (msg.media) {
      const media = msg.media;
      return {
        type: 'media',
        mediaType: media.type,
        media: { id: await this.mediaId(media) },
        ...(media.caption !== undefined ? { caption: media.caption } : {}),
        ...(media.fileName !== undefined ? { filename: media.fileName } : {}),
      };
    }
    const text = msg.text ?? '';
    return { type: 'text', text, previewUrl: msg.previewWanted === true && hasUrl(text) };
  }

  /**
   * The media id of the attachment on this number: kept per device and cache key (its SHA-256 in
   * the key, never the URL), else uploaded once — concurrent messages of a list share the upload.
   */
  private mediaId(media: MediaInput): Promise<string> {
    const key = keys.cloudMedia(
      this.device.deviceId,
      createHash('sha256').update(`${this.device.number().phoneNumberId}\n${media.cacheKey}`).digest('hex'),
    );
    let pending = this.uploading.get(key);
    if (!pending) {
      pending = this.upload(key, media).finally(() => this.uploading.delete(key));
      this.uploading.set(key, pending);
    }
    return pending;
  }

  private async upload(key: string, media: MediaInput): Promise<string> {
    const kept = await this.redis.get(key);
    if (kept) return kept;
    const bytes = await media.load();
    const mimeType = media.mimeType ?? sniffMediaKind(bytes)?.type ?? 'application/octet-stream';
    let id: string;
    try {
      id = await this.graph.uploadMedia(this.device.number(), bytes, mimeType, media.fileName);
    } catch (err) {
      // Nothing of the message left yet: an upload with no answer is retried like any passing failure.
      if (err instanceof GraphUnreachableError)
        throw new RetryableSendError(FAILURE_REASONS.sendFailed, err.message);
      throw await this.failure(err);
    }
    await this.redis
      .set(key, id, 'EX', CLOUD_MEDIA_TTL_SECONDS)
      .catch(() => this.logger.warn('cloud media id not kept: the next message uploads again'));
    return id;
  }
}

/** A phone number's or a `<digits>@s.whatsapp.net` JID's digits (the recipient's wa_id). */
export function digits(phoneOrJid: string): string {
  return (phoneOfJid(phoneOrJid) ?? phoneOrJid).replace(/\D/g, '');
}
