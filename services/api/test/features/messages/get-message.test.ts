import { expect } from 'chai';
import { MediaStore, MessageKindStore, MessageRevisions, PoolBatchStore } from '@mgw/store';
import { loadApiConfig } from '../../../src/config.js';
import { getMessage, type MessageDeps } from '../../../src/features/messages/get-message.js';
import { HolderFixture } from '../../helpers/fake-holder.js';
import { messageStores, receivePdf, sendText } from './message-fixture.js';

describe('getMessage: a message as GET /messages/:id shows it, for its device or its pool (real Redis)', () => {
  const fx = new HolderFixture('get-message-test');
  let s: MessageDeps;
  let deviceId: string;

  beforeEach(() => {
    fx.setUp();
    const stores = messageStores(fx);
    const config = loadApiConfig({ ...process.env, NODE_ENV: 'test' });
    s = {
      ...stores,
      media: new MediaStore(fx.redis, stores.encryption, config.store.media),
      revisions: new MessageRevisions(fx.redis, stores.encryption, 3600),
      kinds: new MessageKindStore(fx.redis, stores.encryption, 3600),
      poolBatches: new PoolBatchStore(fx.redis, 3600),
    };
    deviceId = fx.freshDevice('gm');
  });
  afterEach(() => fx.tearDown());

  it("When the message is the device's, then its record with what it said; another device's or an unknown id is undefined", async () => {
    const id = await receivePdf(s, deviceId, { attachment: undefined, text: 'hello there' });
    const sent = await sendText(s, deviceId);

    expect(await getMessage(s, { deviceId }, id)).to.include({
      messageId: id,
      deviceId,
      direction: 'inbound',
      status: 'received',
      text: 'hello there',
    });
    expect(await getMessage(s, { deviceId }, sent)).to.include({ messageId: sent, direction: 'outbound' });
    expect(await getMessage(s, { deviceId: fx.freshDevice('gm') }, id)).to.equal(undefined);
    expect(await getMessage(s, { deviceId }, '00000000-0000-4000-8000-000000000000')).to.equal(undefined);
  });

  it('When an inbound attachment was kept and its object is gone since, then the record no longer names it', async () => {
    const id = await receivePdf(s, deviceId, { keptMedia: { mediaId: 'med-gone' } });
    const data = (await getMessage(s, { deviceId }, id)) as { attachment: Record<string, unknown> };
    expect(data.attachment).to.deep.equal({
      type: 'document',
      mimeType: 'application/pdf',
      fileName: 'invoice.pdf',
      size: 400,
    });
  });

  it('When a pool token asks, then the message is read on the device of the pool that holds it; one the pool does not know is undefined', async () => {
    const id = await receivePdf(s, deviceId, { attachment: undefined, text: 'to the pool' });
    const poolId = `p-${deviceId}`;
    const asker = { deviceId: `pool:${poolId}`, poolId };
    expect(await getMessage(s, asker, id), 'not yet the pool’s').to.equal(undefined);

    await s.poolBatches.remember(poolId, deviceId, id, '15550001234');
    expect(await getMessage(s, asker, id)).to.include({ messageId: id, deviceId, text: 'to the pool' });
  });
});
