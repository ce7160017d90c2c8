import { expect } from 'chai';
import { scryptSync } from 'node:crypto';
import {
  KDF,
  KdfBusy,
  PasswordHasher,
  normalisePassword,
  passwordLength,
  passwordProblem,
} from './password-hash.js';

/** The console users' password KDF (scrypt), its stored format and its gate: no Redis, no API. */
describe('Password hashing: scrypt with its parameters stored, a dummy hash for unknown users, a bounded gate', () => {
  const hasher = new PasswordHasher();

  it('When a password is hashed, then the parameters and a fresh salt are stored with it, and only that password verifies', async () => {
    const stored = await hasher.hash('correct horse battery');
    expect(stored).to.match(/^scrypt\$15\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    expect(stored).not.to.include('correct horse');
    const [, , , , salt, key] = stored.split('$');
    expect(Buffer.from(salt!, 'base64')).to.have.length(KDF.saltLength);
    expect(Buffer.from(key!, 'base64')).to.have.length(KDF.keyLength);
    expect(await hasher.hash('correct horse battery'), 'a new salt each time').not.to.equal(stored);
    expect(await hasher.verify('correct horse battery', stored)).to.equal(true);
    expect(await hasher.verify('correct horse batterY', stored)).to.equal(false);
    expect(await hasher.verify('', stored)).to.equal(false);
  });

  it('When a hash was made with other parameters, then it verifies with its own (so they can be raised later); a corrupt one is false', async () => {
    const salt = Buffer.alloc(16, 3);
    const key = scryptSync('an older password', salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    const older = `scrypt$14$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    expect(await hasher.verify('an older password', older)).to.equal(true);
    expect(await hasher.verify('an older passworD', older)).to.equal(false);
    // Not ours, or parameters past the bounds (a corrupt record costs no more than a hash).
    for (const corrupt of ['plain', older.replace('$14$', '$31$')])
      expect(await hasher.verify('an older password', corrupt), corrupt).to.equal(false);
  });

  it('When the user is unknown, then the dummy hash costs one scrypt all the same, and the answer is false', async () => {
    const stored = await hasher.hash('correct horse battery');
    const time = async (run: () => Promise<boolean>) => {
      const started = process.hrtime.bigint();
      // Wrong for a known user; for an unknown one even its (dummy's) right password is refused.
      expect(await run()).to.equal(false);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      known.push(await time(() => hasher.verify('wrong password!!', stored)));
      unknown.push(
        await time(() => hasher.verify(i === 0 ? 'correct horse battery' : 'wrong password!!', undefined)),
      );
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    expect(
      median(unknown),
      `unknown ${unknown.join(', ')} ms vs known ${known.join(', ')} ms`,
    ).to.be.greaterThan(median(known) / 3);
  });

  it('When a password is typed composed or decomposed, then it is the same password (NFC); a lone surrogate is refused', async () => {
    const composed = 'caf\u00e9 au lait, s\u2019il vous pla\u00eet';
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.to.equal(composed);
    const stored = await hasher.hash(decomposed);
    expect(await hasher.verify(composed, stored)).to.equal(true);
    expect(normalisePassword(decomposed)).to.equal(composed);
    expect(() => normalisePassword('twelve chars\ud800')).to.throw('valid Unicode');
    expect(passwordProblem('twelve chars\ud800')).to.match(/lone surrogate/);
  });

  it('When a new password is judged, then 12 to 1024 characters count code points of its NFC form', () => {
    expect(passwordProblem('eleven char')).to.equal('must be 12 to 1024 characters long');
    expect(passwordProblem('twelve chars')).to.equal(undefined);
    // Twelve emoji are 24 UTF-16 units, and twelve characters.
    expect(passwordLength('\u{1F600}'.repeat(12))).to.equal(12);
    expect(passwordProblem('\u{1F600}'.repeat(11))).to.match(/12 to 1024/);
    // e + combining acute: two code points, one after NFC.
    expect(passwordLength('e\u0301'.repeat(12))).to.equal(12);
    expect(passwordProblem('x'.repeat(1024))).to.equal(undefined);
    expect(passwordProblem('x'.repeat(1025))).to.match(/12 to 1024/);
  });

  it('When more hashes are asked for than the gate lets run and wait, then the rest are refused at once (KdfBusy) and the gate empties after', async () => {
    const gated = new PasswordHasher({ running: 1, queued: 1 });
    const first = gated.hash('password number 1');
    const second = gated.hash('password number 2');
    expect(gated.load()).to.deep.equal({ running: 1, waiting: 1 });
    let refused: unknown;
    await gated.verify('password number 3', undefined).catch((err: unknown) => (refused = err));
    expect(refused).to.be.instanceOf(KdfBusy);
    const [a, b] = await Promise.all([first, second]);
    expect(await gated.verify('password number 1', a)).to.equal(true);
    expect(await gated.verify('password number 2', b)).to.equal(true);
    expect(gated.load()).to.deep.equal({ running: 0, waiting: 0 });
  });
});
