import { newMessageId, newPlatformMessageId } from '@mgw/contracts';
import { Encryption, InboundStore, MessageStore, type InboundInput } from '@mgw/store';
import type { HolderFixture } from '../../helpers/fake-holder.js';

/** The message stores over the fixture's Redis, as the API's services build them. */
export function messageStores(fx: HolderFixture) {
  const encryption = Encryption.fromEnv();
  return {
    encryption,
    redis: fx.redis,
    messages: new MessageStore(fx.redis, 3600),
    inbound: new InboundStore(fx.redis, encryption, 3600),
  };
}

type Stores = ReturnType<typeof messageStores>;

/** A PDF a contact sent the device (its id), recorded as the sender records it. */
export async function receivePdf(
  s: Pick<Stores, 'inbound'>,
  deviceId: string,
  more: Partial<InboundInput> = {},
): Promise<string> {
  return (await s.inbound.record(deviceId, {
    platformMessageId: newPlatformMessageId(),
    from: '15550001234',
    contact: { phone: '15550001234' },
    attachment: { type: 'document', mimeType: 'application/pdf', fileName: 'invoice.pdf', size: 400 },
    receivedAt: new Date(),
    mediaMessage: Buffer.from('the WebMessageInfo'),
    ...more,
  }))!;
}

/** A message the device sent through the gateway (its id), marked sent as the sender marks it. */
export async function sendText(s: Pick<Stores, 'messages'>, deviceId: string): Promise<string> {
  const job = {
    kind: 'send' as const,
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to: '15550001234',
    contentId: newMessageId(),
    linkGeneration: 0,
    enqueuedAt: Date.now(),
  };
  await s.messages.claim(job);
  await s.messages.markSent(job, new Date());
  return job.messageId;
}
