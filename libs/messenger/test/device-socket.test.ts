import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { ContactIdentities, Encryption } from '@mgw/store';
import { proto } from '@whiskeysockets/baileys';
import { DeviceSocket, loadAuthState, receiptsOf, type WASocket } from '../src/index.js';

describe('messenger: device connection hand-over (no socket)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  const connection = () =>
    new DeviceSocket({
      redis,
      encryption: Encryption.fromEnv(),
      logger: createLogger({ level: 'silent', service: 'test' }),
      deviceId: 'conn-test',
      messageRetentionSeconds: 60,
      epoch: () => 1,
    });

  it('When the hand-over begins while a job waits for the socket to open, then the wait ends at once with false', async () => {
    const conn = connection();
    const started = Date.now();
    const waiting = conn.waitForOpen(30_000);
    conn.drain();
    expect(await waiting).to.equal(false);
    // Not its 30 s wait: quiet: 5 ms.
    expect(Date.now() - started).to.be.below(5_000);
    // A job that starts waiting after the hand-over began does not wait either.
    expect(await conn.waitForOpen(30_000)).to.equal(false);
  });
});

describe('messenger: device connection reports an open only for the current socket (fake socket, real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  /** A socket whose profile picture lookup answers when the test says so. */
  function fakeSocket() {
    const ev = new EventEmitter();
    let answer: (url: string) => void = () => undefined;
    const sock = {
      ev,
      user: { id: '15550009999:3@s.whatsapp.net', name: 'Me' },
      profilePictureUrl: () => new Promise<string>((resolve) => (answer = resolve)),
      end: async () => undefined,
    };
    return { sock, ev, answerPicture: (url: string) => answer(url) };
  }

  async function openedThenDescribedLate(interrupt: (conn: DeviceSocket, ev: EventEmitter) => unknown) {
    const fake = fakeSocket();
    const conn = new DeviceSocket({
      redis,
      encryption: Encryption.fromEnv(),
      logger: createLogger({ level: 'silent', service: 'test' }),
      deviceId: 'conn-late-' + Math.random().toString(36).slice(2, 8),
      messageRetentionSeconds: 60,
      epoch: () => 1,
      createSocket: () => fake.sock as unknown as WASocket,
    });
    const opens: unknown[] = [];
    conn.on('open', (info) => opens.push(info));
    await conn.start();
    fake.ev.emit('connection.update', { connection: 'open' });
    await interrupt(conn, fake.ev);
    fake.answerPicture('https://example.invalid/pic.jpg');
    // Let the described open run its course.
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    return { conn, opens };
  }

  it('When the socket opens and its account is described, then open is reported with the picture', async () => {
    const { conn, opens } = await openedThenDescribedLate(() => undefined);
    expect(opens).to.have.length(1);
    expect(opens[0]).to.include({ phone: '15550009999', profilePic: 'https://example.invalid/pic.jpg' });
    await conn.stop();
  });

  it('When the socket logs in, then a job waiting for it goes at once, before the account is described (a picture lookup of up to 10 s)', async () => {
    const fake = fakeSocket();
    const conn = new DeviceSocket({
      redis,
      encryption: Encryption.fromEnv(),
      logger: createLogger({ level: 'silent', service: 'test' }),
      deviceId: 'conn-login-' + Math.random().toString(36).slice(2, 8),
      messageRetentionSeconds: 60,
      epoch: () => 1,
      createSocket: () => fake.sock as unknown as WASocket,
    });
    const events: string[] = [];
    conn.on('loggedIn', () => events.push('loggedIn'));
    conn.on('open', () => events.push('open'));
    await conn.start();
    const waiting = conn.waitForOpen(30_000);
    fake.ev.emit('connection.update', { connection: 'open' });
    expect(await waiting).to.equal(true);
    expect(events, 'before the picture is answered').to.deep.equal(['loggedIn']);
    fake.answerPicture('https://example.invalid/pic.jpg');
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(events).to.deep.equal(['loggedIn', 'open']);
    await conn.stop();
  });

  it('When the connection is stopped while the account is still being described, then no open is reported', async () => {
    const { opens } = await openedThenDescribedLate((conn) => conn.stop());
    expect(opens).to.deep.equal([]);
  });

  it('When the socket closes while the account is still being described, then no open is reported', async () => {
    const { conn, opens } = await openedThenDescribedLate((_conn, ev) =>
      ev.emit('connection.update', { connection: 'close', lastDisconnectError: undefined }),
    );
    expect(opens).to.deep.equal([]);
    await conn.stop();
  });
});

describe('messenger: receipts among Baileys message statuses', () => {
  const { Status } = proto.WebMessageInfo;
  const mine = (id: string) => ({ remoteJid: '15551234567@s.whatsapp.net', fromMe: true, id });

  it('When statuses of our messages come (update or folded into an upsert), then delivery and read acks are receipts and our own send states are not', () => {
    const receipts = receiptsOf([
      { key: mine('pending'), status: Status.PENDING },
      { key: mine('acked'), status: Status.SERVER_ACK },
      { key: mine('delivered'), status: Status.DELIVERY_ACK },
      { key: mine('read'), status: Status.READ },
      { key: mine('played'), status: Status.PLAYED },
      { key: mine('none'), status: null },
      { key: { ...mine('theirs'), fromMe: false }, status: Status.READ },
    ]);
    expect(receipts.map((r) => [r.platformMessageId, r.status])).to.deep.equal([
      ['delivered', 'delivered'],
      ['read', 'read'],
      ['played', 'read'],
    ]);
    expect(receipts.every((r) => r.at instanceof Date)).to.equal(true);
  });
});

describe('messenger: a device linked before the identity map existed (fake socket, real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When its socket starts, then the pairs its auth state already held seed the map once per link, and contacts that write are reported with their LID', async () => {
    const deviceId = 'conn-seed-' + Math.random().toString(36).slice(2, 8);
    const encryption = Encryption.fromEnv();
    const auth = await loadAuthState({ redis, encryption, deviceId, epoch: () => 1 });
    await redis.set(keys.lease(deviceId), JSON.stringify({ epoch: 1 }));
    await auth.state.keys.set({
      'lid-mapping': {
        '15551230001': '111222333444555',
        '111222333444555_reverse': '15551230001',
        '15551230002': '222333444555666',
        '222333444555666_reverse': '15551230002',
      },
    });
    const start = async () => {
      const ev = new EventEmitter();
      const conn = new DeviceSocket({
        redis,
        encryption,
        logger: createLogger({ level: 'silent', service: 'test' }),
        deviceId,
        messageRetentionSeconds: 60,
        epoch: () => 1,
        createSocket: () => ({ ev, end: async () => undefined }) as unknown as WASocket,
      });
      await conn.start();
      return { conn, ev };
    };
    const map = new ContactIdentities(redis);
    const { conn, ev } = await start();
    await conn.identitiesSeeded;
    expect(await map.seeded(deviceId)).to.equal(true);
    expect(await map.resolveMany(deviceId, ['15551230001', '222333444555666@lid'])).to.deep.equal([
      { phone: '15551230001', lid: '111222333444555@lid' },
      { phone: '15551230002', lid: '222333444555666@lid' },
    ]);

    const reported: unknown[] = [];
    const wrote: string[][] = [];
    conn.on('identities', (ids) => reported.push(...ids));
    conn.on('wroteToUs', (who) => wrote.push(who));
    ev.emit('messages.upsert', {
      type: 'notify',
      messages: [
        { key: { id: 'A', fromMe: false, remoteJid: '999888777666555@lid' } },
        { key: { id: 'B', fromMe: false, remoteJid: '15551230003@s.whatsapp.net' } },
      ],
    });
    expect(reported).to.deep.equal([{ lid: '999888777666555@lid' }]);
    expect(wrote).to.deep.equal([['999888777666555@lid', '15551230003']]);
    await conn.stop();

    // A second owner of the same link does not read the auth state's pairs again.
    await redis.hdel(keys.contactIdentities(deviceId), 'p:15551230001');
    const again = await start();
    await again.conn.identitiesSeeded;
    expect(await map.resolve(deviceId, '15551230001')).to.deep.equal({ phone: '15551230001' });
    await again.conn.stop();
    await redis.del(keys.contactIdentities(deviceId), keys.lease(deviceId));
  });
});

describe('messenger: every socket open waits for its admission (fake socket, real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When the device waits for admission, then no socket opens until admitted; a transient close waits again, a 515 does not, and a hand-over ends the wait', async () => {
    const opened: EventEmitter[] = [];
    const grants: ((ok: boolean) => void)[] = [];
    const signals: AbortSignal[] = [];
    const conn = new DeviceSocket({
      redis,
      encryption: Encryption.fromEnv(),
      logger: createLogger({ level: 'silent', service: 'test' }),
      deviceId: 'conn-admit-' + Math.random().toString(36).slice(2, 8),
      messageRetentionSeconds: 60,
      epoch: () => 1,
      admission: async (signal) => {
        signals.push(signal);
        return { admitted: new Promise<boolean>((resolve) => grants.push(resolve)) };
      },
      createSocket: () => {
        const ev = new EventEmitter();
        opened.push(ev);
        return {
          ev,
          user: { id: '15550009999:3@s.whatsapp.net' },
          profilePictureUrl: async () => '',
          end: async () => undefined,
        } as unknown as WASocket;
      },
    });
    await conn.start();
    // In line, not open.
    expect(grants).to.have.length(1);
    expect(opened).to.have.length(0);
    grants[0]!(true);
    await new Promise((r) => setImmediate(r));
    expect(opened).to.have.length(1);
    // 515 continues the login at once, without a turn in line.
    opened[0]!.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: Object.assign(new Error('restart'), { output: { statusCode: 515 } }) },
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(opened).to.have.length(2);
    expect(grants).to.have.length(1);
    // A transient close (408) waits its backoff (full jitter: up to 1 s at first), then its turn.
    opened[1]!.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: Object.assign(new Error('timed out'), { output: { statusCode: 408 } }) },
    });
    // Waited for up to 10 s: 10 x the longest backoff (1 s).
    const deadline = Date.now() + 10_000;
    while (grants.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(grants).to.have.length(2);
    expect(opened).to.have.length(2);
    // The hand-over ends the wait: nothing opens, even if admitted later.
    conn.drain();
    expect(signals[1]!.aborted).to.equal(true);
    grants[1]!(true);
    await new Promise((r) => setImmediate(r));
    expect(opened).to.have.length(2);
    await conn.stop();
  });
});
