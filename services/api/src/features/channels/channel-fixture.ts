import type { Channel, DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import { ChannelList, Encryption, MessageStore } from '@mgw/store';
import {
  MemoryAcceptor,
  MemoryHolder,
  MemoryMessages,
  MemoryRedis,
  type HolderAnswer,
} from '../test-support.js';
import type { ChannelDeps } from './channel-ask.js';
import { publishPost } from './publish-post.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): what the channel use cases' fast tests
 * (`<use-case>.test.ts` beside each) set up alike, without an API — an in-memory Redis and holder
 * answering as the sender's channel-commands.ts, and for the posts the send pipeline in memory (an
 * acceptor that queues them like sends, the message records it leaves, marked sent as the sender
 * marks them).
 */

/** A channel the account owns, and one it does not. */
export const ours = '120363000000000001@newsletter';
export const theirs = '120363000000000002@newsletter';
export const jid = (id: string) => ({ kind: 'jid' as const, id });
export const view = (id: string, role: Channel['role'], name = 'News'): Channel => ({
  id,
  name,
  description: '',
  followers: 1,
  role,
  verified: false,
});
/** A JPEG's first bytes: what the API passes on once it checked the picture. */
export const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
/** The holder's answer naming a channel. */
export const reply = (channel: Channel): DeviceCommandReply =>
  ({ ok: true, data: { channel } }) as DeviceCommandReply;
/** What the commands said, without their request and device ids. */
export const unaddressed = (heard: DeviceCommand[]) =>
  heard.map(({ requestId: _r, deviceId: _d, ...rest }) => rest);

/** The asks' setup: an in-memory holder and Redis, the device's channel list over it. */
export function channelAskFixture() {
  const fx = new MemoryHolder();
  const redis = new MemoryRedis();
  const encryption = Encryption.fromEnv();
  const known = new ChannelList(redis.client);
  const deps: ChannelDeps & { messages: MessageStore } = {
    holder: fx.holder,
    known,
    redis: redis.client,
    encryption,
    messages: new MessageStore(redis.client, 3600),
  };
  /** A connected device whose holder answers with `answer`: its id and the commands it heard. */
  async function heldDevice(answer: HolderAnswer) {
    const deviceId = fx.freshDevice('ca');
    fx.connect(deviceId);
    const heard = fx.fakeSender(deviceId, answer);
    return { deviceId, heard };
  }
  /** The device's channel list: each channel's id, role and name. */
  const listed = async (deviceId: string) => (await known.list(deviceId)).map((c) => [c.id, c.role, c.name]);
  return { fx, redis, encryption, known, deps, heldDevice, listed };
}
export type ChannelAskFixture = ReturnType<typeof channelAskFixture>;

/** The posts' setup: a connected device, its channel list, the send pipeline in memory. */
export function channelPostFixture() {
  const fx = new MemoryHolder();
  const redis = new MemoryRedis();
  const deviceId = fx.freshDevice('cp');
  fx.connect(deviceId);
  const known = new ChannelList(redis.client);
  const messages = new MemoryMessages();
  const acceptor = new MemoryAcceptor(messages);
  const services = { messages, acceptor, redis: redis.client };
  const deps: Parameters<typeof publishPost>[0] = {
    holder: fx.holder,
    known,
    redis: redis.client,
    encryption: Encryption.fromEnv(),
    acceptor,
    media: { get: async () => undefined },
  };

  const holderSays = (answer: HolderAnswer) => fx.fakeSender(deviceId, answer);
  const jobOf = async (id: string) => (await messages.job(deviceId, id))!;
  const queued = () => acceptor.requests.length;
  /** A post to our channel, queued (or held until `sendAt`). */
  async function posted(body: { text: string; sendAt?: string }): Promise<string> {
    await known.remember(deviceId, { id: ours, name: 'Ours', role: 'owner' });
    const outcome = await publishPost(deps, deviceId, jid(ours), body);
    if (!outcome.ok) throw new Error(`not posted: ${JSON.stringify(outcome)}`);
    return outcome.data.messageId;
  }
  /** A post to our channel, marked sent a minute ago as the sender marks it. */
  async function sentPost(): Promise<string> {
    const id = await posted({ text: 'Hello readers' });
    messages.sent(deviceId, id, new Date(Date.now() - 60_000));
    return id;
  }
  return {
    fx,
    deviceId,
    known,
    messages,
    acceptor,
    services,
    deps,
    holderSays,
    jobOf,
    queued,
    posted,
    sentPost,
  };
}
export type ChannelPostFixture = ReturnType<typeof channelPostFixture>;
