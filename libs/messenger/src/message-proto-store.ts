import type { Redis } from 'ioredis';
import { proto } from '@whiskeysockets/baileys';
import { keys } from '@mgw/contracts';

/**
 * The proto of every message a device sent, by its WhatsApp id, kept for the message retention:
 * Baileys' `getMessage` re-encrypts it when a recipient asks for a retry, and a reply quotes it.
 */
export class MessageProtoStore {
  constructor(
    private readonly redis: Redis,
    private readonly deviceId: string,
    private readonly ttlSeconds: number,
  ) {}

  async save(
    platformMessageId: string,
    message: proto.IMessage,
    ttlSeconds = this.ttlSeconds,
  ): Promise<void> {
    const bytes = Buffer.from(proto.Message.encode(message).finish());
    await this.redis.set(
      keys.messageProto(this.deviceId, platformMessageId),
      bytes.toString('base64'),
      'EX',
      ttlSeconds,
    );
  }

  async load(platformMessageId: string): Promise<proto.IMessage | undefined> {
    const raw = await this.redis.get(keys.messageProto(this.deviceId, platformMessageId));
    return raw ? proto.Message.decode(Buffer.from(raw, 'base64')) : undefined;
  }
}
