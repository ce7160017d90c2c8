import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { expect } from 'chai';
import { validateEnv } from '@mgw/common';
import {
  Encryption,
  EncryptionKey,
  SealedValueError,
  encryptionConfig,
  encryptionEnv,
  type SealedValueProblem,
} from '@mgw/store';

const key = (id: string) => new EncryptionKey(id, randomBytes(32));
const CTX = 'mgw:{shop-1}:auth:creds';

function problemOf(fn: () => unknown): SealedValueProblem | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof SealedValueError) return err.problem;
    throw err;
  }
  return undefined;
}

describe('Encryption (AES-256-GCM, key ids, context binding)', () => {
  const k1 = key('k1');
  const k2 = key('k2');
  const enc = Encryption.fromConfig({ current: k1, old: [] });

  it('When text and bytes are sealed and opened in the same context, then the plaintext comes back, and two seals of one value differ', () => {
    const text = 'hello, wörld ✓ {"a":1}';
    const sealed = enc.sealText(text, CTX);
    expect(sealed).to.match(/^enc1:k1:[A-Za-z0-9_-]+$/);
    expect(sealed).not.to.include('hello');
    expect(enc.openText(sealed, CTX)).to.equal(text);
    expect(enc.sealText(text, CTX)).not.to.equal(sealed);

    const bytes = randomBytes(1000);
    const blob = enc.seal(bytes, CTX);
    expect(blob.length).to.equal(bytes.length + 3 + 2 + 2 + 12 + 16);
    expect(enc.open(blob, CTX).equals(bytes)).to.equal(true);
    expect(enc.open(enc.seal(Buffer.alloc(0), CTX), CTX).length).to.equal(0);
    expect(enc.openText(enc.sealText('', CTX), CTX)).to.equal('');
  });

  it('When any byte of a sealed value is changed, then opening it throws authentication_failed', () => {
    const blob = enc.seal(Buffer.from('secret'), CTX);
    // every byte after the header: IV, ciphertext and tag
    for (let i = 7; i < blob.length; i++) {
      const tampered = Buffer.from(blob);
      tampered[i] = tampered[i]! ^ 0x01;
      expect(
        problemOf(() => enc.open(tampered, CTX)),
        `byte ${i}`,
      ).to.equal('authentication_failed');
    }
    const text = enc.sealText('secret', CTX);
    const body = Buffer.from(text.slice('enc1:k1:'.length), 'base64url');
    body[body.length - 1] = body[body.length - 1]! ^ 0x80;
    expect(problemOf(() => enc.openText(`enc1:k1:${body.toString('base64url')}`, CTX))).to.equal(
      'authentication_failed',
    );
  });

  it('When a value is opened under another context (copied to another key or field), then it throws authentication_failed', () => {
    const sealed = enc.sealText('secret', 'mgw:{a}:auth:keys:session\0alice.0');
    expect(problemOf(() => enc.openText(sealed, 'mgw:{a}:auth:keys:session\0bob.0'))).to.equal(
      'authentication_failed',
    );
    expect(problemOf(() => enc.openText(sealed, 'mgw:{b}:auth:keys:session\0alice.0'))).to.equal(
      'authentication_failed',
    );
  });

  it('When a value names a key id that is not configured, then it throws unknown_key naming the id', () => {
    const other = Encryption.fromConfig({ current: key('elsewhere'), old: [] });
    const sealed = other.sealText('secret', CTX);
    expect(problemOf(() => enc.openText(sealed, CTX))).to.equal('unknown_key');
    expect(() => enc.openText(sealed, CTX)).to.throw(/"elsewhere"/);
    expect(problemOf(() => enc.open(other.seal(Buffer.from('x'), CTX), CTX))).to.equal('unknown_key');
  });

  it('When the key id in the header is edited to another configured key, then it does not open', () => {
    const both = Encryption.fromConfig({ current: k1, old: [new EncryptionKey('k2', k1.bytes)] });
    const sealed = both.sealText('secret', CTX);
    // Same key bytes under another id: the id is authenticated, so the swap is caught.
    expect(problemOf(() => both.openText(sealed.replace('enc1:k1:', 'enc1:k2:'), CTX))).to.equal(
      'authentication_failed',
    );
  });

  it('When the key is rotated, then values under the old key still open, new values use the new key, and the old key alone cannot read them', () => {
    const before = enc.sealText('written before the rotation', CTX);
    const rotated = Encryption.fromConfig({ current: k2, old: [k1] });
    expect(rotated.openText(before, CTX)).to.equal('written before the rotation');
    const after = rotated.sealText('written after', CTX);
    expect(rotated.keyIdOf(after)).to.equal('k2');
    expect(rotated.keyIdOf(before)).to.equal('k1');
    expect(problemOf(() => enc.openText(after, CTX))).to.equal('unknown_key');
  });

  it('When a value was stored before encryption (legacy plaintext), then it is read as is and counts as not sealed', () => {
    const json = '{"noiseKey":{"private":{"type":"Buffer","data":"AAEC"}}}';
    expect(enc.openText(json, CTX)).to.equal(json);
    expect(enc.isSealed(json)).to.equal(false);
    expect(enc.keyIdOf(json)).to.equal(undefined);
    const raw = Buffer.from('CgVoZWxsbw==');
    expect(enc.open(raw, CTX)).to.equal(raw);
    expect(enc.isSealed(raw)).to.equal(false);
  });

  it('When a value looks sealed but is broken, then it throws malformed or unsupported_version, never returns it', () => {
    expect(problemOf(() => enc.openText('enc1:', CTX))).to.equal('malformed');
    expect(problemOf(() => enc.openText('enc1:k1:not base64!', CTX))).to.equal('malformed');
    expect(problemOf(() => enc.openText('enc1:k1:AAAA', CTX))).to.equal('malformed');
    expect(problemOf(() => enc.openText(enc.sealText('x', CTX).replace('enc1:', 'enc9:'), CTX))).to.equal(
      'unsupported_version',
    );
    expect(problemOf(() => enc.open(Buffer.from([0xe5, 0x6e, 0x63]), CTX))).to.equal('malformed');
    expect(enc.isSealed('enc1:')).to.equal(true);
    expect(enc.keyIdOf('enc1:')).to.equal(undefined);
  });
});

describe('encryption config (MGW_ENCRYPTION_KEY, MGW_ENCRYPTION_OLD_KEYS)', () => {
  const line = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
  const load = (env: Record<string, string>) => encryptionConfig(validateEnv([encryptionEnv], env));

  it('When the key is missing or empty, then loading fails naming the variable and how to generate one', () => {
    for (const env of [{}, { MGW_ENCRYPTION_KEY: '' }] as Record<string, string>[]) {
      expect(() => load(env)).to.throw(/MGW_ENCRYPTION_KEY is required.*npm run -s keys -- generate/);
    }
  });

  it('When an entry is malformed, then loading fails naming the variable and the entry, without echoing the secret', () => {
    const secret = randomBytes(16).toString('base64');
    for (const [env, pattern] of [
      [
        { MGW_ENCRYPTION_KEY: `k1:${secret}` },
        /MGW_ENCRYPTION_KEY is malformed: key k1 must be the base64 of exactly 32/,
      ],
      [{ MGW_ENCRYPTION_KEY: secret }, /MGW_ENCRYPTION_KEY is malformed: expected <keyId>:<base64 key>/],
      [{ MGW_ENCRYPTION_KEY: `a.b:${secret}` }, /MGW_ENCRYPTION_KEY is malformed/],
      [
        { MGW_ENCRYPTION_KEY: line('k2'), MGW_ENCRYPTION_OLD_KEYS: `${line('k1')},k0:${secret}` },
        /MGW_ENCRYPTION_OLD_KEYS entry 2 is malformed/,
      ],
    ] as const) {
      let message = '';
      try {
        load(env);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).to.match(pattern);
      expect(message).not.to.include(secret);
    }
  });

  it('When old keys are listed, then they are parsed, a repeat of the current key is dropped, and one id for two keys is refused', () => {
    const current = line('k3');
    const cfg = load({
      MGW_ENCRYPTION_KEY: current,
      MGW_ENCRYPTION_OLD_KEYS: ` ${line('k1')} , ${line('k2')},${current},`,
    });
    expect(cfg.current.id).to.equal('k3');
    expect(cfg.old.map((k) => k.id)).to.deep.equal(['k1', 'k2']);
    expect(() => load({ MGW_ENCRYPTION_KEY: current, MGW_ENCRYPTION_OLD_KEYS: line('k3') })).to.throw(
      /key id "k3" is used twice/,
    );
    expect(load({ MGW_ENCRYPTION_KEY: current, MGW_ENCRYPTION_OLD_KEYS: '' }).old).to.deep.equal([]);
  });

  it('When a config holding a key is logged or serialized, then the key bytes do not appear', () => {
    const current = line('k1');
    const cfg = load({ MGW_ENCRYPTION_KEY: current });
    const b64 = current.split(':')[1]!;
    expect(JSON.stringify(cfg)).not.to.include(b64);
    expect(inspect(cfg, { depth: 5 })).not.to.include(b64);
    expect(inspect(cfg, { depth: 5 })).not.to.include(cfg.current.bytes.toString('hex').slice(0, 16));
    expect(cfg.current.toLine()).to.equal(current);
  });
});
