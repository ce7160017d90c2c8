import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { startRedisServer, type RedisServerHandle } from '@mgw/testing';
import {
  ENCRYPTED_FAMILIES,
  Encryption,
  EncryptionKey,
  encryptionStatus,
  reencrypt,
  storageContext,
} from '@mgw/store';

/**
 * Rotation against a private Redis (the whole keyspace is scanned, so nothing else may live in
 * it): values under an old key and legacy plaintext become values under the current key.
 */
describe('encryption rotation: status and reencrypt (real Redis)', function () {
  this.timeout(30_000);
  let server: RedisServerHandle;
  let redis: Redis;
  const k1 = new EncryptionKey('k1', randomBytes(32));
  const k2 = new EncryptionKey('k2', randomBytes(32));
  const before = Encryption.fromConfig({ current: k1, old: [] });
  const after = Encryption.fromConfig({ current: k2, old: [k1] });

  beforeEach(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterEach(async () => {
    await redis.quit();
    await server.stop();
  });

  const creds = keys.authCreds('shop-1');
  const sessions = keys.authKeys('shop-1', 'session');
  const proto = keys.messageProto('shop-1', '3EB0AAAA');
  const idem = keys.idempotency('ab'.repeat(32), 'req-1');
  const content = keys.content('shop-1', 'c-1');
  const inbound = keys.message('shop-1', 'in-1');
  const webhook = keys.webhook('shop-1');
  const proxy = keys.deviceProxy('shop-1');
  const cloud = keys.cloudDevice('shop-1');
  const blob = keys.mediaBlob('shop-1', 'med_1');
  const statusRecord = keys.statusRecord('shop-1', 's-1');
  const chat = keys.chat('shop-1', '120363000000000001@g.us');
  const settings = keys.deviceSettings('shop-1');
  const labels = keys.labels('shop-1');

  /** One value of each family in each state: plaintext, under k1, under k2. */
  async function seed(): Promise<void> {
    await redis.set(creds, '{"noiseKey":"legacy"}');
    await redis.hset(sessions, {
      'alice.0': '{"legacy":true}',
      'bob.0': before.sealText('{"old":true}', storageContext(sessions, 'bob.0')),
      'carol.0': after.sealText('{"new":true}', storageContext(sessions, 'carol.0')),
    });
    await redis.set(proto, Buffer.from([10, 5, 104, 101, 108, 108, 111]).toString('base64'), 'EX', 3600);
    await redis.set(idem, before.sealText('{"state":"done"}', storageContext(idem)), 'EX', 600);
    await redis.set('mgw:{shop-1}:session', 'not encrypted, not scanned');
    // a request's content: its body, bytes and recipients' variables are sealed, its counters are not
    await redis.hset(content, {
      body: before.sealText('{"text":"hi"}', storageContext(content, 'body')),
      media: before.seal(Buffer.from([1, 2, 3]), storageContext(content, 'media')),
      'vars:m-1': before.sealText('{"name":"Ana"}', storageContext(content, 'vars:m-1')),
      remaining: '2',
      bytes: '5',
    });
    // an inbound message: its text is sealed, its other fields are not
    await redis.hset(inbound, {
      direction: 'inbound',
      from: '15550000001',
      text: before.sealText('hello', storageContext(inbound, 'text')),
    });
    // a webhook: its secret is sealed, its URL is not
    await redis.hset(webhook, {
      url: 'https://hooks.example.com/x',
      secret: before.sealText('whsec_c2VjcmV0', storageContext(webhook, 'secret')),
    });
    // a status update: its audience is sealed, its size and views (`v:<jid>`) are not
    await redis.hset(statusRecord, {
      audience: before.sealText('["15550000002@s.whatsapp.net"]', storageContext(statusRecord, 'audience')),
      size: '1',
      views: '1',
      'v:15550000002@s.whatsapp.net': '2026-11-25T12:00:00.000Z',
    });
    // a chat: a group's subject is sealed, its counters and ids are not
    await redis.hset(chat, {
      lastMessageId: 'in-1',
      seq: '1',
      subject: before.sealText('Team', storageContext(chat, 'subject')),
    });
    // a device's settings: the text a rejected caller gets is sealed, the flags are not
    await redis.hset(settings, {
      rejectCalls: '1',
      dailyCap: '500',
      rejectCallMessage: before.sealText('No calls', storageContext(settings, 'rejectCallMessage')),
    });
    // the account's labels: each label's JSON (its name is the account's text), one per field
    await redis.hset(labels, '5', before.sealText('{"name":"VIP","color":3}', storageContext(labels, '5')));
    // a device's proxy: its URL (with the proxy's credentials) is sealed whole
    await redis.set(
      proxy,
      before.sealText('{"url":"socks5://u:p@proxy.example:1080"}', storageContext(proxy)),
    );
    // a Cloud API device's configuration: its access token, app secret and verify token, sealed whole
    await redis.set(
      cloud,
      before.sealText('{"phoneNumberId":"1001","accessToken":"EAAG"}', storageContext(cloud)),
    );
    // a media object kept in Redis (POST /media without MEDIA_STORE): its bytes, sealed whole
    await redis.set(blob, before.seal(Buffer.from('%PDF-1.4 menu'), storageContext(blob)), 'EX', 600);
  }

  it('When values are under an old key or in plaintext, then status counts each family by key id and plaintext', async () => {
    await seed();
    const status = await encryptionStatus(redis, after);
    expect(status).to.deep.equal([
      { family: 'auth-creds', sealed: {}, plaintext: 1, malformed: 0 },
      { family: 'auth-keys', sealed: { k1: 1, k2: 1 }, plaintext: 1, malformed: 0 },
      { family: 'message-protos', sealed: {}, plaintext: 1, malformed: 0 },
      { family: 'idempotency', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'contents', sealed: { k1: 3 }, plaintext: 0, malformed: 0 },
      { family: 'inbound-messages', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'status-records', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'webhooks', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'media-blobs', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'chats', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'device-settings', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'labels', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'device-proxies', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
      { family: 'cloud-devices', sealed: { k1: 1 }, plaintext: 0, malformed: 0 },
    ]);
    expect(status.map((s) => s.family)).to.deep.equal(ENCRYPTED_FAMILIES.map((f) => f.name));
  });

  it('When reencrypt runs, then every value ends under the current key with the same plaintext, TTLs kept, and a second run rewrites nothing', async () => {
    await seed();
    const results = await reencrypt(redis, after);
    expect(results.map((r) => [r.family, r.rewritten, r.current, r.changed, r.failed])).to.deep.equal([
      ['auth-creds', 1, 0, 0, 0],
      ['auth-keys', 2, 1, 0, 0],
      ['message-protos', 1, 0, 0, 0],
      ['idempotency', 1, 0, 0, 0],
      ['contents', 3, 0, 0, 0],
      ['inbound-messages', 1, 0, 0, 0],
      ['status-records', 1, 0, 0, 0],
      ['webhooks', 1, 0, 0, 0],
      ['media-blobs', 1, 0, 0, 0],
      ['chats', 1, 0, 0, 0],
      ['device-settings', 1, 0, 0, 0],
      ['labels', 1, 0, 0, 0],
      ['device-proxies', 1, 0, 0, 0],
      ['cloud-devices', 1, 0, 0, 0],
    ]);
    const status = await encryptionStatus(redis, after);
    for (const s of status) {
      expect(s.plaintext, s.family).to.equal(0);
      expect(Object.keys(s.sealed), s.family).to.deep.equal(['k2']);
    }
    const onlyK2 = Encryption.fromConfig({ current: k2, old: [] });
    expect(onlyK2.openText((await redis.get(creds))!, storageContext(creds))).to.equal(
      '{"noiseKey":"legacy"}',
    );
    expect(
      onlyK2.openText((await redis.hget(sessions, 'bob.0'))!, storageContext(sessions, 'bob.0')),
    ).to.equal('{"old":true}');
    // Protos were base64 text before encryption; sealed they hold the proto's bytes.
    const protoBytes = onlyK2.open((await redis.getBuffer(proto))!, storageContext(proto));
    expect([...protoBytes]).to.deep.equal([10, 5, 104, 101, 108, 108, 111]);
    expect(await redis.ttl(proto)).to.be.within(3500, 3600);
    expect(await redis.ttl(idem)).to.be.within(500, 600);
    expect(await redis.get('mgw:{shop-1}:session')).to.equal('not encrypted, not scanned');
    expect(onlyK2.openText((await redis.hget(content, 'body'))!, storageContext(content, 'body'))).to.equal(
      '{"text":"hi"}',
    );
    expect(
      onlyK2.openText((await redis.hget(content, 'vars:m-1'))!, storageContext(content, 'vars:m-1')),
    ).to.equal('{"name":"Ana"}');
    expect(await redis.hmget(content, 'remaining', 'bytes')).to.deep.equal(['2', '5']);

    const again = await reencrypt(redis, after);
    expect(again.map((r) => r.rewritten)).to.deep.equal(ENCRYPTED_FAMILIES.map(() => 0));
    expect(again.map((r) => r.current)).to.deep.equal([1, 3, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(onlyK2.openText((await redis.hget(chat, 'subject'))!, storageContext(chat, 'subject'))).to.equal(
      'Team',
    );
    expect(await redis.hget(settings, 'dailyCap')).to.equal('500');
    expect(
      onlyK2.openText((await redis.hget(webhook, 'secret'))!, storageContext(webhook, 'secret')),
    ).to.equal('whsec_c2VjcmV0');
    expect(await redis.hget(webhook, 'url')).to.equal('https://hooks.example.com/x');
  });

  it('When a writer changes a field between the read and the write of reencrypt, then the writer’s value (or deletion) stays and the rest is converted', async () => {
    await seed();
    const concurrent = after.sealText('{"ratchet":"advanced"}', storageContext(sessions, 'alice.0'));
    let raced = 0;
    const results = await reencrypt(redis, after, {
      beforeWrite: async (batch) => {
        // the device's owner advances a session while reencrypt holds the old value...
        if (batch.some((v) => v.key === sessions)) await redis.hset(sessions, 'alice.0', concurrent);
        // ...and a logout purges the credentials: they must not come back
        if (batch.some((v) => v.key === creds)) await redis.del(creds);
        raced += 1;
      },
    });
    expect(raced).to.equal(14);
    expect(await redis.hget(sessions, 'alice.0')).to.equal(concurrent);
    expect(await redis.exists(creds)).to.equal(0);
    expect(results.find((r) => r.family === 'auth-creds')).to.include({ rewritten: 0, changed: 1 });
    const keysResult = results.find((r) => r.family === 'auth-keys')!;
    expect(keysResult).to.include({ rewritten: 1, current: 1, changed: 1, failed: 0 });
    expect(after.keyIdOf((await redis.hget(sessions, 'bob.0'))!)).to.equal('k2');
  });

  it('When a value cannot be opened (unknown key or tampered), then reencrypt leaves it untouched and reports it', async () => {
    const stranger = Encryption.fromConfig({ current: new EncryptionKey('gone', randomBytes(32)), old: [] });
    const unknown = stranger.sealText('{"x":1}', storageContext(creds));
    await redis.set(creds, unknown);
    const moved = before.sealText('{"y":1}', storageContext(sessions, 'bob.0'));
    await redis.hset(sessions, 'alice.0', moved);
    const results = await reencrypt(redis, after);
    expect(results.find((r) => r.family === 'auth-creds')).to.include({ failed: 1, rewritten: 0 });
    expect(results.find((r) => r.family === 'auth-keys')).to.include({ failed: 1, rewritten: 0 });
    expect(results.flatMap((r) => r.errors).join('\n'))
      .to.match(/"gone"/)
      .and.match(/failed authentication/);
    expect(await redis.get(creds)).to.equal(unknown);
    expect(await redis.hget(sessions, 'alice.0')).to.equal(moved);
  });
});
