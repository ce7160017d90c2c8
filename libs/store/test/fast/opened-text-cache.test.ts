import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Encryption, EncryptionKey, OpenedTextCache, SealedValueError, type Sealer } from '@mgw/store';

const CTX = 'mgw:{shop-1}:chat:15550000001';

/** Counts what reaches the real sealer's openText. */
function counting(inner: Sealer): Sealer & { opened: number } {
  const s = {
    opened: 0,
    seal: (p: Buffer, c: string) => inner.seal(p, c),
    open: (v: Buffer, c: string) => inner.open(v, c),
    sealText: (p: string, c: string) => inner.sealText(p, c),
    openText(v: string, c: string) {
      s.opened++;
      return inner.openText(v, c);
    },
  };
  return s;
}

describe('OpenedTextCache (what the API pages opened, kept by the sealed value itself)', () => {
  const enc = Encryption.fromConfig({ current: new EncryptionKey('k1', randomBytes(32)), old: [] });
  const options = { maxBytes: 1024 * 1024, ttlMs: 60_000, maxEntryChars: 16 * 1024 };

  it('When the same sealed text is opened again, then the sealer opens it once; a new value at the same place is opened anew', () => {
    const inner = counting(enc);
    const cache = new OpenedTextCache(inner, options);
    const first = enc.sealText('hello', `${CTX}:lastPreview`);
    expect(cache.openText(first, `${CTX}:lastPreview`)).to.equal('hello');
    expect(cache.openText(first, `${CTX}:lastPreview`)).to.equal('hello');
    expect(inner.opened).to.equal(1);
    // The chat's preview changed: another sealed value (its own IV), never the kept plaintext.
    const second = enc.sealText('goodbye', `${CTX}:lastPreview`);
    expect(cache.openText(second, `${CTX}:lastPreview`)).to.equal('goodbye');
    expect(inner.opened).to.equal(2);
  });

  it('When a sealed value is read at another place than it was sealed for, then it still fails to open (the context is part of the key)', () => {
    const cache = new OpenedTextCache(enc, options);
    const sealed = enc.sealText('secret', `${CTX}:lastPreview`);
    expect(cache.openText(sealed, `${CTX}:lastPreview`)).to.equal('secret');
    expect(() => cache.openText(sealed, 'mgw:{shop-2}:chat:15550000001:lastPreview')).to.throw(
      SealedValueError,
    );
    // A failure is not kept: the same wrong read fails again.
    expect(() => cache.openText(sealed, 'mgw:{shop-2}:chat:15550000001:lastPreview')).to.throw(
      SealedValueError,
    );
  });

  it('When values are past its bounds, then a large one and legacy plaintext are not kept, and the size bound evicts', () => {
    const inner = counting(enc);
    const cache = new OpenedTextCache(inner, { maxBytes: 4096, ttlMs: 60_000, maxEntryChars: 512 });
    const large = enc.sealText('x'.repeat(1000), CTX);
    cache.openText(large, CTX);
    cache.openText(large, CTX);
    expect(inner.opened).to.equal(2);
    expect(cache.openText('written before encryption', CTX)).to.equal('written before encryption');
    expect(cache.size).to.equal(0);
    for (let i = 0; i < 50; i++) cache.openText(enc.sealText(`text ${i}`, CTX), CTX);
    expect(cache.size).to.be.greaterThan(0).and.below(50);
  });

  it('When a kept value is older than its time to live, then it is opened again', async () => {
    const inner = counting(enc);
    const cache = new OpenedTextCache(inner, { ...options, ttlMs: 30 });
    const sealed = enc.sealText('hello', CTX);
    cache.openText(sealed, CTX);
    await new Promise((r) => setTimeout(r, 60));
    cache.openText(sealed, CTX);
    expect(inner.opened).to.equal(2);
  });

  it('When it is turned off (0 bytes), then the sealer itself is used', () => {
    expect(OpenedTextCache.over(enc, { ...options, maxBytes: 0 })).to.equal(enc);
    expect(OpenedTextCache.over(enc, options)).to.be.instanceOf(OpenedTextCache);
  });
});
