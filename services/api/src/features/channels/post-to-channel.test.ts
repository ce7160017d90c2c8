import { expect } from 'chai';
import type { MemoryAcceptor } from '../test-support.js';
import { channelPostFixture, ours } from './channel-fixture.js';
import { postToChannel } from './post-to-channel.js';

describe("postToChannel: one message to the channel's JID through the send pipeline (an in-memory acceptor)", () => {
  let acceptor: MemoryAcceptor;
  let deviceId: string;

  beforeEach(() => {
    ({ acceptor, deviceId } = channelPostFixture());
  });

  it("When a post names an uploaded media object, then postToChannel queues its id with the object's size and type; an object the device does not have is media_not_found and nothing is queued", async () => {
    const media = {
      get: async (d: string, id: string) =>
        d === deviceId && id === 'm-1'
          ? { mediaId: 'm-1', size: 2048, mimeType: 'image/png', fileName: 'a.png' }
          : undefined,
    };
    const accepted = await postToChannel({ acceptor, media } as never, deviceId, ours, {
      attachment: { type: 'image', mediaId: 'm-1', caption: 'Look' },
    } as never);
    expect(accepted).to.deep.include({ kind: 'accepted' });
    expect(acceptor.requests[0]!.content.attachment).to.deep.equal({
      type: 'image',
      source: { mediaId: 'm-1', size: 2048 },
      caption: 'Look',
      mimeType: 'image/png',
      filename: 'a.png',
    });
    expect(
      await postToChannel({ acceptor, media } as never, deviceId, ours, {
        attachment: { type: 'image', mediaId: 'm-2' },
      } as never),
    ).to.deep.equal({ kind: 'refused', reason: 'media_not_found' });
    expect(acceptor.requests).to.have.length(1);
  });
});
