import { expect } from 'chai';
import type { MemoryHolder } from '../test-support.js';
import { channelPostFixture, ours, theirs, type ChannelPostFixture } from './channel-fixture.js';
import { findPost } from './find-post.js';

describe('findPost: a post of this device found under its own channel only (an in-memory send pipeline)', () => {
  let fx: MemoryHolder;
  let services: ChannelPostFixture['services'];
  let deviceId: string;
  let posted: ChannelPostFixture['posted'];

  beforeEach(() => {
    ({ fx, services, deviceId, posted } = channelPostFixture());
  });

  it("When a post is looked up, then it is found under its own channel only: another channel's id, an unknown id or another device is post_not_found", async () => {
    const id = await posted({ text: 'Hello readers' });
    const notFound = { ok: false, reason: 'post_not_found' };

    const found = await findPost(services, deviceId, ours, id);
    expect(found.ok && found.data).to.deep.include({ messageId: id, to: ours });
    expect(await findPost(services, deviceId, theirs, id)).to.deep.equal(notFound);
    expect(await findPost(services, deviceId, ours, '00000000-0000-4000-8000-000000000000')).to.deep.equal(
      notFound,
    );
    expect(await findPost(services, fx.freshDevice('cp'), ours, id)).to.deep.equal(notFound);
  });
});
