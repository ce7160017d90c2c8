import type { RedisClient } from '@mgw/common';
import { proto } from '@whiskeysockets/baileys';
import { keys } from '@mgw/contracts';
import { storageContext, type Encryption } from '@mgw/store';

/**
 * The proto of every message a device sent, by its WhatsApp id, kept for the message retention:
 * Baileys' `getMessage` re-encrypts it when a recipient asks for a retry, and a reply quotes it.
 *
 * It holds the message text (an OTP code, for an OTP), so it is sealed: the proto's bytes under
 * the Redis key as context. Before encryption the value was their base64 text; such a value is
 * still read (the `message-protos` family re-encrypts it).
 */
export class MessageProtoStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly deviceId: string,
    private readonly ttlSeconds: number,
    private readonly encryption: Encryption,
  ) {}

  /** `ttlSeconds` overrides the retention, e.g. to keep an OTP only as long as a retry needs it. */
  async save(
    platformMessageId: string,
    message: proto.IMessage,
    ttlSeconds = this.ttlSeconds,
  ): Promise<void> {
    const key = keys.messageProto(this.deviceId, platformMessageId);
    const bytes = Buffer.from(proto.Message.encode(message).finish());
    await this.redis.set(key, this.encryption.seal(bytes, storageContext(key)), 'EX', ttlSeconds);
  }

  async load(platformMessageId: string): Promise<proto.IMessage | undefined> {
    const key = keys.messageProto(this.deviceId, platformMessageId);
    const raw = await this.redis.getBuffer(key);
    if (!raw) return undefined;
    const bytes = this.encryption.isSealed(raw)
      ? this.encryption.open(raw, storageContext(key))
      : Buffer.from(raw.toString('latin1'), 'base64');
    return proto.Message.decode(bytes);
  }
}
