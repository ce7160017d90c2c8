import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, type MessageContent } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { ContentStore, Encryption } from '../src/index.js';

/**
 * The sender's copies of contents (ContentStore's `cache` option): a batch's messages share one
 * content, read and opened once. Each test deletes the content from Redis after the first read:
 * what the second read answers tells whether it came from the copy.
 */
describe('store: the sender keeps the contents it read (real Redis)', () => {
  let redis: Redis;
  const deviceId = `cc-${Math.random().toString(36).slice(2, 8)}`;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  });
  after(async () => {
    await redis.quit();
  });

  const encryption = Encryption.fromEnv();
  const cached = (opts = { maxBytes: 1024 * 1024, ttlMs: 60_000 }) =>
    new ContentStore(redis, encryption, 60, opts);

  async function store(
    contents: ContentStore,
    content: MessageContent,
    opts: { media?: Buffer; heldUntil?: number } = {},
  ): Promise<string> {
    const contentId = newMessageId();
    const multi = redis.multi();
    contents.stage(multi, deviceId, contentId, content, 2, opts.media, opts.heldUntil);
    await multi.exec();
    return contentId;
  }
  const drop = (contentId: string) => redis.del(keys.content(deviceId, contentId));

  it('When a wholly accepted text is read twice, then the second read is the copy (Redis is not asked)', async () => {
    const contents = cached();
    const id = await store(contents, { text: 'hello, list' });
    const first = await contents.get(deviceId, id);
    expect(first?.content).to.deep.equal({ text: 'hello, list' });
    await drop(id);
    expect(await contents.get(deviceId, id)).to.equal(first);
  });

  it('When the store has no cache (the API, the default), then every read asks Redis', async () => {
    const contents = new ContentStore(redis, encryption, 60);
    const id = await store(contents, { text: 'not kept' });
    expect((await contents.get(deviceId, id))?.content.text).to.equal('not kept');
    await drop(id);
    expect(await contents.get(deviceId, id)).to.equal(undefined);
  });

  it('When a content has an attachment, then it is read again each time (a failed attachment shows at once)', async () => {
    const contents = cached();
    const id = await store(
      contents,
      { text: 'see this', attachment: { type: 'image', source: { stored: true, size: 9 } } },
      { media: Buffer.from('png bytes') },
    );
    expect((await contents.get(deviceId, id))?.attachmentError).to.equal(undefined);
    await contents.rememberAttachmentError(deviceId, id, 'media_fetch_failed');
    expect((await contents.get(deviceId, id))?.attachmentError).to.equal('media_fetch_failed');
    await drop(id);
    expect(await contents.get(deviceId, id)).to.equal(undefined);
  });

  it('When a batch is still being accepted (held), then its content is not kept until it is ready', async () => {
    const contents = cached();
    const id = await store(contents, { text: 'held batch' }, { heldUntil: Date.now() + 60_000 });
    expect((await contents.get(deviceId, id))?.heldUntil).to.be.a('number');
    const multi = redis.multi();
    contents.stageReady(multi, deviceId, id);
    await multi.exec();
    const ready = await contents.get(deviceId, id);
    expect(ready?.heldUntil).to.equal(undefined);
    await drop(id);
    expect(await contents.get(deviceId, id)).to.equal(ready);
  });

  it('When a copy is older than its TTL, then Redis is read again', async () => {
    const contents = cached({ maxBytes: 1024 * 1024, ttlMs: 30 });
    const id = await store(contents, { text: 'short-lived copy' });
    expect(await contents.get(deviceId, id)).to.not.equal(undefined);
    await drop(id);
    // Read again once the copy is past its 30 ms (waited for, not slept).
    await waitFor(async () => (await contents.get(deviceId, id)) === undefined, {
      intervalMs: 10,
      timeoutMs: 10_000,
      what: 'the copy to be read again from Redis',
    });
  });

  it('When a content is larger than the whole cache, then it is not kept (the bound holds)', async () => {
    const contents = cached({ maxBytes: 256, ttlMs: 60_000 });
    const id = await store(contents, { text: 'x'.repeat(1000) });
    expect((await contents.get(deviceId, id))?.content.text).to.have.length(1000);
    await drop(id);
    expect(await contents.get(deviceId, id)).to.equal(undefined);
  });

  it("When two devices' contents are read, then each is kept under its own device (no crossing)", async () => {
    const contents = cached();
    const id = await store(contents, { text: 'device one' });
    await contents.get(deviceId, id);
    expect(await contents.get(`${deviceId}-other`, id)).to.equal(undefined);
  });
});
