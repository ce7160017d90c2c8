import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import {
  Encryption,
  EncryptionKey,
  LabelStore,
  forgetAccount,
  forgetLabels,
  storageContext,
} from '@mgw/store';

describe('label store: the labels a device learned from app-state sync, bounded, sealed, forgotten on logout (real Redis)', function () {
  this.timeout(30_000);
  let redis: Redis;
  const encryption = Encryption.fromConfig({ current: new EncryptionKey('k1', randomBytes(32)), old: [] });
  let n = 0;
  let device: string;
  const label = (id: string, name: string, color = 0, deleted = false) => ({ id, name, color, deleted });

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  beforeEach(() => {
    device = `labels-${process.pid}-${++n}`;
  });
  afterEach(() => forgetLabels(redis, device));
  after(() => redis.quit());

  it('When labels are created, renamed and put on chats, then the list shows each once with its chat count, and a page of chats follows its cursor', async () => {
    const store = new LabelStore(redis, encryption);
    expect(await store.edit(device, label('5', 'New customer', 1))).to.equal('kept');
    expect(await store.edit(device, { ...label('12', 'Paid', 3), predefinedId: '2' })).to.equal('kept');
    expect(await store.edit(device, label('5', 'VIP', 4))).to.equal('kept');
    for (const chat of ['15550000003', '15550000001', '120363000000000001@g.us', '15550000002'])
      expect(await store.associate(device, '5', chat, true)).to.equal('kept');
    await store.associate(device, '5', '15550000001', true); // twice: one chat
    await store.associate(device, '12', '15550000001', true);
    await store.associate(device, '12', '15550000001', false);
    expect(await store.list(device)).to.deep.equal([
      { id: '5', name: 'VIP', color: 4, chats: 4 },
      { id: '12', name: 'Paid', color: 3, predefinedId: '2', chats: 0 },
    ]);
    const first = await store.chats(device, '5', { limit: 3 });
    expect(first).to.deep.equal({
      chats: ['120363000000000001@g.us', '15550000001', '15550000002'],
      next: '15550000002',
    });
    expect(await store.chats(device, '5', { limit: 3, after: first!.next! })).to.deep.equal({
      chats: ['15550000003'],
      next: null,
    });
    expect(await store.chats(device, '12', { limit: 10 })).to.deep.equal({ chats: [], next: null });
    expect(await store.chats(device, '99', { limit: 10 }), 'an unknown label').to.equal(undefined);
  });

  it('When a label is deleted, then it leaves the list and its chats go with it', async () => {
    const store = new LabelStore(redis, encryption);
    await store.edit(device, label('5', 'VIP'));
    await store.associate(device, '5', '15550000001', true);
    expect(await store.edit(device, label('5', 'VIP', 0, true))).to.equal('kept');
    expect(await store.list(device)).to.deep.equal([]);
    expect(await redis.exists(keys.labelChats(device, '5'), keys.labelIds(device))).to.equal(0);
    expect(await store.chats(device, '5', { limit: 10 })).to.equal(undefined);
  });

  it('When a chat names a label before its edit arrives, then the chat is kept and the label lists once named', async () => {
    const store = new LabelStore(redis, encryption);
    expect(await store.associate(device, '7', '15550000001', true)).to.equal('kept');
    expect(await store.list(device), 'no name yet: not listed').to.deep.equal([]);
    await store.edit(device, label('7', 'Later'));
    expect(await store.list(device)).to.deep.equal([{ id: '7', name: 'Later', color: 0, chats: 1 }]);
  });

  it('When a device is at its bounds, then a new label or a new chat is refused by name and the kept ones stay', async () => {
    const store = new LabelStore(redis, encryption, { labels: 2, chatsPerLabel: 2 });
    await store.edit(device, label('1', 'A'));
    await store.edit(device, label('2', 'B'));
    expect(await store.edit(device, label('3', 'C'))).to.equal('labels');
    expect(await store.associate(device, '3', '15550000001', true), 'a third label by association').to.equal(
      'labels',
    );
    expect(await store.edit(device, label('2', 'B2')), 'a rename is not a new label').to.equal('kept');
    await store.associate(device, '1', '15550000001', true);
    await store.associate(device, '1', '15550000002', true);
    expect(await store.associate(device, '1', '15550000003', true)).to.equal('chats');
    expect(await store.associate(device, '1', '15550000002', true), 'a chat already there').to.equal('kept');
    await store.edit(device, label('2', 'B2', 0, true));
    expect(await store.edit(device, label('3', 'C')), 'room again after a delete').to.equal('kept');
    expect((await store.list(device)).map((l) => [l.id, l.name, l.chats])).to.deep.equal([
      ['1', 'A', 2],
      ['3', 'C', 0],
    ]);
  });

  it('When a label is kept, then its name is sealed at rest under the device key and field', async () => {
    const store = new LabelStore(redis, encryption);
    await store.edit(device, label('5', 'Secret customers'));
    const raw = (await redis.hget(keys.labels(device), '5'))!;
    expect(raw).to.not.include('Secret');
    expect(JSON.parse(encryption.openText(raw, storageContext(keys.labels(device), '5')))).to.deep.equal({
      name: 'Secret customers',
      color: 0,
    });
    // Sealed for this field: moved to another label's field it does not open.
    await redis.hset(keys.labels(device), '6', raw);
    await redis.hset(keys.labelIds(device), '6', 0);
    let refused: unknown;
    await store.list(device).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(Error);
  });

  it('When the account logs out (forgetAccount), then every label key of the device is gone', async () => {
    const store = new LabelStore(redis, encryption);
    await store.edit(device, label('5', 'VIP'));
    await store.associate(device, '5', '15550000001', true);
    await store.associate(device, '8', '15550000002', true);
    await forgetAccount(redis, device);
    expect(
      await redis.exists(
        keys.labels(device),
        keys.labelIds(device),
        keys.labelChats(device, '5'),
        keys.labelChats(device, '8'),
      ),
    ).to.equal(0);
  });
});
