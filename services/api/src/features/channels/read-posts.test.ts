import { expect } from 'chai';
import { CHANNEL_POSTS_READ, keys, type DeviceCommandReply } from '@mgw/contracts';
import type { MemoryRedis } from '../test-support.js';
import {
  channelAskFixture,
  jid,
  ours,
  unaddressed,
  view,
  type ChannelAskFixture,
} from './channel-fixture.js';
import { readPosts } from './read-posts.js';

describe("readPosts: the latest posts' counts, the gateway's ids beside WhatsApp's (an in-memory holder and Redis)", () => {
  let redis: MemoryRedis;
  let deps: ChannelAskFixture['deps'];
  let heldDevice: ChannelAskFixture['heldDevice'];
  let listed: ChannelAskFixture['listed'];

  beforeEach(() => {
    ({ redis, deps, heldDevice, listed } = channelAskFixture());
  });

  it("When the posts' counts are read, then each post sent through the gateway has its messageId first, the others WhatsApp's fields alone, and the list is not touched", async () => {
    const posts = [
      { platformMessageId: 'WA-1', serverId: '101', views: 5, reactions: { '👍': 2 } },
      { platformMessageId: 'WA-2', serverId: '102', views: 1, reactions: {} },
      { serverId: '103', views: 0, reactions: {} },
    ];
    const { deviceId, heard } = await heldDevice(
      () => ({ ok: true, data: { channel: view(ours, 'owner'), posts } }) as DeviceCommandReply,
    );
    await redis.set(keys.messageByPlatformId(deviceId, 'WA-1'), 'our-message-1');

    const outcome = await readPosts(deps, deviceId, jid(ours));

    expect(outcome).to.deep.equal({
      ok: true,
      data: { channelId: ours, posts: [{ messageId: 'our-message-1', ...posts[0] }, posts[1], posts[2]] },
    });
    const first = outcome.ok ? outcome.data.posts[0]! : {};
    expect(Object.keys(first)[0]).to.equal('messageId');
    expect(unaddressed(heard)).to.deep.equal([
      { type: 'channel-posts', key: jid(ours), count: CHANNEL_POSTS_READ },
    ]);
    expect(await listed(deviceId)).to.deep.equal([]);
  });
});
