import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import crypto, {
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  KeyObject,
  randomBytes,
} from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  addTransactionCapability,
  Curve,
  generateSignalPubKey,
  hmacSign,
  initAuthCreds,
  makeEventBuffer,
  outsideTransaction,
  promiseTimeout,
  proto,
  signedKeyPair,
  type BaileysEventMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import { makeLibSignalRepository } from '@whiskeysockets/baileys/lib/Signal/libsignal.js';

import { linkTestDevice, startTestSimulator, until } from '@mgw/testing';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** A logger for Baileys' key stores that prints nothing. */
const quiet = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as never;

/** A key pair made outside libsignal (its private key was never seen by libsignal's cache). */
function foreignKeyPair(): { privKey: Buffer; pubKey: Buffer; keyObject: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return {
    privKey: Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url'),
    pubKey: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'),
    keyObject: privateKey,
  };
}

/** X25519 through node:crypto directly, the reference the patched libsignal must match. */
function referenceAgreement(privateKey: KeyObject, pubKey: Uint8Array): Buffer {
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(pubKey).toString('base64url') },
    format: 'jwk',
  });
  return diffieHellman({ privateKey, publicKey });
}

describe('dependency patches (patches/, applied by npm install)', () => {
  it('When the dependencies are installed, then every patch in patches/ is applied to them', () => {
    const patches = readdirSync(`${root}patches`).filter((f) => f.endsWith('.patch'));
    expect(patches.length).to.be.greaterThan(0);
    for (const patch of patches) {
      // applying the patch in reverse succeeds only where it is applied
      execFileSync('git', ['apply', '--check', '--reverse', `patches/${patch}`], {
        cwd: root,
        stdio: 'pipe',
      });
    }
  });

  it('When libsignal agrees a key again (cached private key object), then the secret is the X25519 one every time', () => {
    const ours = Curve.generateKeyPair();
    const theirs = foreignKeyPair();
    const expected = referenceAgreement(theirs.keyObject, ours.public);
    for (let i = 0; i < 3; i++) {
      // fresh copies, as key buffers are read from the session store on every message
      const secret = Curve.sharedKey(Buffer.from(ours.private), Buffer.from(theirs.pubKey));
      expect(Buffer.from(secret).equals(expected)).to.equal(true);
      // a private key libsignal has never seen (not in its cache) agrees the same secret
      const fromForeign = Curve.sharedKey(Buffer.from(theirs.privKey), Buffer.from(ours.public));
      expect(Buffer.from(fromForeign).equals(expected)).to.equal(true);
    }
    const other = foreignKeyPair();
    expect(Buffer.from(Curve.sharedKey(Buffer.from(ours.private), other.pubKey)).equals(expected)).to.equal(
      false,
    );
  });

  it("When two sockets' key stores run transactions (one shared async context), then each sees only its own", async () => {
    const written: string[] = [];
    const store = (name: string): SignalKeyStore => ({
      get: async () => ({}),
      set: async (data) => void written.push(`${name}:${Object.keys(data['session'] ?? {}).join()}`),
    });
    const options = { maxCommitRetries: 1, delayBetweenTriesMs: 1 };
    const a = addTransactionCapability(store('a'), quiet, options);
    const b = addTransactionCapability(store('b'), quiet, options);
    const seen: boolean[][] = [];
    await a.transaction(async () => {
      seen.push([a.isInTransaction(), b.isInTransaction()]);
      await a.set({ session: { 'a-1': new Uint8Array([1]) } });
      await b.transaction(async () => {
        await new Promise((r) => setImmediate(r));
        seen.push([a.isInTransaction(), b.isInTransaction()]);
        await b.set({ session: { 'b-1': new Uint8Array([2]) } });
      }, 'b');
      seen.push([a.isInTransaction(), b.isInTransaction()]);
    }, 'a');
    seen.push([a.isInTransaction(), b.isInTransaction()]);
    expect(seen).to.deep.equal([
      [true, false],
      [true, true],
      [true, false],
      [false, false],
    ]);
    // each transaction committed its own writes to its own store, b's (inner) first
    expect(written).to.deep.equal(['b:b-1', 'a:a-1']);
  });

  it('When a task started inside a transaction writes after the transaction committed, then (run outsideTransaction) its write reaches the store', async () => {
    const written: string[] = [];
    const store: SignalKeyStore = {
      get: async () => ({}),
      set: async (data) => void written.push(...Object.keys(data['tctoken'] ?? {})),
    };
    const keys = addTransactionCapability(store, quiet, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    let release!: () => void;
    const later = new Promise<void>((r) => (release = r));
    let lost!: Promise<void>;
    let kept!: Promise<void>;
    await keys.transaction(async () => {
      // Fire-and-forget, as Baileys' privacy-token issuance after a send: it writes once the
      // transaction that started it has committed.
      lost = later.then(() => keys.set({ tctoken: { inside: { token: Buffer.alloc(0) } } }));
      kept = outsideTransaction(() =>
        later.then(() => keys.set({ tctoken: { outside: { token: Buffer.alloc(0) } } })),
      );
    }, 'me');
    release();
    await Promise.all([lost, kept]);
    // The write made in the committed transaction's context goes nowhere; the other is stored.
    expect(written).to.deep.equal(['outside']);
  });

  it('When a socket meets more new contacts than its LID caches hold, then they stay bounded and arm no timer per contact', async function () {
    this.timeout(60_000);
    // A key store in memory, as the socket's Redis one behaves: what is set can be read back.
    const data = new Map<string, unknown>();
    const store: SignalKeyStore = {
      get: async (type, ids) => Object.fromEntries(ids.map((id) => [id, data.get(`${type}/${id}`)])) as never,
      set: async (values) => {
        for (const [type, byId] of Object.entries(values)) {
          for (const [id, value] of Object.entries(byId ?? {})) data.set(`${type}/${id}`, value);
        }
      },
    };
    const keys = addTransactionCapability(store, quiet, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    const repo = makeLibSignalRepository({ creds: initAuthCreds(), keys }, quiet);
    // Every contact's phone publishes the same bundle here: the caches key on the contact.
    const identity = Curve.generateKeyPair();
    const signed = signedKeyPair(identity, 1);
    const bundle = {
      registrationId: 7,
      identityKey: generateSignalPubKey(identity.public),
      signedPreKey: {
        keyId: 1,
        publicKey: generateSignalPubKey(signed.keyPair.public),
        signature: signed.signature,
      },
    };
    // Timers armed for a day or more (the caches' TTL is 3 days) while the contacts come in.
    const setTimer = globalThis.setTimeout;
    let longTimers = 0;
    globalThis.setTimeout = ((fn: () => void, ms?: number, ...args: unknown[]) => {
      if ((ms ?? 0) >= 86_400_000) longTimers++;
      return (setTimer as (...a: unknown[]) => NodeJS.Timeout)(fn, ms, ...args);
    }) as typeof setTimeout;
    const contacts = 1_200; // more than the 1,000 each cache keeps
    try {
      for (let i = 0; i < contacts; i++) {
        const pn = `1555100${String(i).padStart(4, '0')}@s.whatsapp.net`;
        const lid = `9900100${String(i).padStart(4, '0')}@lid`;
        await repo.injectE2ESession({ jid: pn, session: bundle as never });
        await keys.set({
          'device-list': { [pn.split('@')[0]!]: ['0'] },
        } as never);
        await repo.lidMapping.storeLIDPNMappings([{ lid, pn }]);
        // The PN session moves to the LID (as a send to a contact whose LID became known does).
        expect((await repo.migrateSession(pn, lid)).migrated).to.equal(1);
      }
    } finally {
      globalThis.setTimeout = setTimer;
    }
    // Unpatched, each contact armed three 3-day timers (its two mappings and its migrated
    // session), each holding the async context of the transaction it was armed in.
    expect(longTimers).to.equal(0);
    const cache = (
      repo.lidMapping as unknown as { mappingCache: { size: number; max: number; maxSize: number } }
    ).mappingCache;
    expect(cache.size).to.be.at.most(1_000);
    // Bounded by maxSize, not max: with max, lru-cache allocated its arrays for 1,000 entries at
    // once (~39 KiB per cache, two per socket, on every idle account).
    expect({ max: cache.max, maxSize: cache.maxSize }).to.deep.equal({ max: 0, maxSize: 1_000 });
    // An evicted mapping is read from the key store again, never lost.
    expect(await repo.lidMapping.getLIDForPN('15551000000@s.whatsapp.net')).to.equal('99001000000@lid');
    repo.close?.();
  });

  it('When a socket sends several messages to one contact, then it issues its privacy token to the contact once', async function () {
    this.timeout(30_000);
    const sim = await startTestSimulator();
    const device = await linkTestDevice(sim, '15550003001').catch(async (err: unknown) => {
      await sim.close();
      throw err;
    });
    try {
      for (const text of ['one', 'two', 'three']) {
        const sent = await device.sock!.sendMessage('15550003099@s.whatsapp.net', { text });
        await until(() => sim.inbox('15550003099').find((m) => m.id === sent!.key.id));
        // The issuance follows the first send (fire and forget): let it land before the next one.
        await until(() => sim.privacyTokens('15550003001') >= 1);
      }
      expect(sim.privacyTokens('15550003001')).to.equal(1);
    } finally {
      await device.end();
      await sim.close();
    }
  });

  it('When libsignal and Baileys key an HMAC or a cipher, then they hand Node a KeyObject (no failed brand checks), with the same output', () => {
    const signal = createRequire(import.meta.url)('libsignal/src/crypto.js') as {
      calculateMAC: (key: Buffer, data: Buffer) => Buffer;
      encrypt: (key: Buffer, data: Buffer, iv: Buffer) => Buffer;
      decrypt: (key: Buffer, data: Buffer, iv: Buffer) => Buffer;
    };
    const [key, data, iv] = [randomBytes(32), randomBytes(100), randomBytes(16)];
    const expectedMac = crypto.createHmac('sha256', key).update(data).digest();
    const cipher = crypto.createCipheriv('aes-256-cbc', key, iv);
    const expectedCiphertext = Buffer.concat([cipher.update(data), cipher.final()]);
    // What each call hands Node as its key (libsignal reads crypto's functions at each call,
    // Baileys through ES module bindings, which syncBuiltinESMExports updates).
    const keyTypes: string[] = [];
    const seen = (k: unknown) => keyTypes.push(k instanceof KeyObject ? 'KeyObject' : typeof k);
    const names = ['createHmac', 'createCipheriv', 'createDecipheriv'] as const;
    const spied = crypto as unknown as Record<string, (...args: unknown[]) => unknown>;
    const original = Object.fromEntries(names.map((name) => [name, spied[name]!]));
    for (const name of names) {
      spied[name] = (...args: unknown[]) => {
        seen(args[1]);
        return original[name]!(...args);
      };
    }
    syncBuiltinESMExports();
    let outputs: Buffer[];
    try {
      outputs = [
        signal.calculateMAC(key, data),
        signal.encrypt(key, data, iv),
        signal.decrypt(key, expectedCiphertext, iv),
        hmacSign(data, key),
      ];
    } finally {
      Object.assign(crypto, original);
      syncBuiltinESMExports();
    }
    expect(keyTypes).to.deep.equal(['KeyObject', 'KeyObject', 'KeyObject', 'KeyObject']);
    expect(outputs.map((b) => b.toString('hex'))).to.deep.equal(
      [expectedMac, expectedCiphertext, data, expectedMac].map((b) => b.toString('hex')),
    );
  });

  it('When a Baileys query answers in time, then no stack trace is formatted for it', async () => {
    const prepare = Error.prepareStackTrace;
    let formatted = 0;
    Error.prepareStackTrace = (err, frames) => {
      formatted++;
      return prepare ? prepare(err, frames) : String(err);
    };
    try {
      expect(await promiseTimeout<number>(60_000, (resolve) => resolve(7))).to.equal(7);
      await new Promise((r) => setImmediate(r));
    } finally {
      Error.prepareStackTrace = prepare;
    }
    expect(formatted).to.equal(0);
  });

  it('When a Baileys query times out, then its error still carries the stack of the caller (formatted lazily)', async function callerOfTheQuery() {
    const error = await promiseTimeout(5, () => undefined).then(
      () => undefined,
      (e: unknown) => e as { message: string; data?: { stack?: string } },
    );
    expect(error?.message).to.equal('Timed Out');
    expect(error?.data?.stack).to.include('dependency-patches.test');
  });

  it("When a message's receipts arrive out of order while Baileys buffers events, then the merged update keeps the higher status (a read is not turned back into a delivery)", () => {
    const { DELIVERY_ACK, ERROR, PENDING, READ } = proto.WebMessageInfo.Status;
    const silent = {
      level: 'silent',
      child: () => silent,
      trace() {},
      debug() {},
      info() {},
      warn() {},
      error() {},
    };
    const ev = makeEventBuffer(silent as never);
    const updates: BaileysEventMap['messages.update'][] = [];
    const upserts: BaileysEventMap['messages.upsert'][] = [];
    ev.on('messages.update', (u) => updates.push(u));
    ev.on('messages.upsert', (u) => upserts.push(u));
    const key = (id: string) => ({ remoteJid: '15550000001@s.whatsapp.net', fromMe: true, id });
    const receipt = (id: string, status: number) => [{ key: key(id), update: { status } }];

    // Read before its delivery (a stalled event loop, or two devices of the recipient): read stays.
    ev.buffer();
    ev.emit('messages.update', receipt('a', READ));
    ev.emit('messages.update', receipt('a', DELIVERY_ACK));
    ev.flush();
    expect(updates.flat().map((u) => [u.key.id, u.update.status])).to.deep.equal([['a', READ]]);

    // Folded into the buffered upsert of our own message, in either order.
    ev.buffer();
    ev.emit('messages.update', receipt('b', READ));
    ev.emit('messages.upsert', { type: 'append', messages: [{ key: key('b'), status: PENDING }] });
    ev.emit('messages.update', receipt('b', DELIVERY_ACK));
    ev.flush();
    expect(upserts.flatMap((u) => u.messages).map((m) => [m.key.id, m.status])).to.deep.equal([['b', READ]]);

    // In order, a status still moves forward; an error ack is never dropped.
    updates.length = 0;
    ev.buffer();
    ev.emit('messages.update', receipt('c', DELIVERY_ACK));
    ev.emit('messages.update', receipt('c', READ));
    ev.emit('messages.update', receipt('d', PENDING));
    ev.emit('messages.update', receipt('d', ERROR));
    ev.flush();
    expect(updates.flat().map((u) => [u.key.id, u.update.status])).to.deep.equal([
      ['c', READ],
      ['d', ERROR],
    ]);
  });
});
