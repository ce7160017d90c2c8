import { expect } from 'chai';
import type { Request } from 'express';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ERRORS, keys } from '@mgw/contracts';
import { Encryption, storageContext } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { ApiError } from '../src/http/api-error.js';
import { Idempotency, OutcomeUnknownError, type Outcome } from '../src/http/idempotency.js';

/**
 * The Idempotency-Key after an outcome nobody could know (docs/api.md, "When Redis is silent"): the
 * key keeps its seed, and the next request with it runs again with that seed (so the same ids).
 */
describe('Idempotency-Key: a run whose outcome is unknown, or whose process is gone', () => {
  let redis: Redis;
  const encryption = Encryption.fromEnv();
  const token = `tok-${randomUUID()}`;
  const request = (key: string, body: unknown = { to: '15550001234', text: 'hi' }) =>
    ({
      method: 'POST',
      path: '/api/messenger/v1/send',
      body,
      get: (name: string) => (name.toLowerCase() === 'idempotency-key' ? key : undefined),
    }) as unknown as Request;
  const accepted = (seed?: string): Outcome => ({ status: 202, body: { success: true, messageId: seed } });

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    const found = await redis.keys(keys.idempotency(token, '*'));
    if (found.length) await redis.del(...found);
    redis.disconnect();
  });

  it('When a run ended with an unknown outcome, then the next request with the key runs again with the same seed, and its answer is replayed after', async () => {
    const idem = new Idempotency(redis, encryption, 3600, 60);
    const key = `unknown-${randomUUID()}`;
    let firstSeed: string | undefined;
    const failed = await idem
      .run(request(key), token, ({ seed }) => {
        firstSeed = seed;
        throw new OutcomeUnknownError({ messageId: 'x' });
      })
      .catch((err: unknown) => err);
    expect(failed).to.be.instanceOf(OutcomeUnknownError);
    expect(firstSeed).to.be.a('string');
    // The mark lands in the background (storage answers here): the retry finds it.
    let retried: string | undefined;
    for (let i = 0; i < 50 && retried === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      retried = await idem
        .run(request(key), token, async ({ seed }) => accepted(seed))
        .then((o) => o.body.messageId as string)
        .catch((err: unknown) => {
          if (err instanceof ApiError && err.error === ERRORS.idempotencyInProgress) return undefined;
          throw err;
        });
    }
    expect(retried, 'the same seed').to.equal(firstSeed);
    const replay = await idem.run(request(key), token, () => Promise.reject(new Error('must not run')));
    expect(replay).to.deep.include({ replayed: true, status: 202 });
  });

  it('When the run holding a key is gone (its claim outlived the longest run), then a request with the key takes it over with its seed; a fresh claim still gets 409', async () => {
    const idem = new Idempotency(redis, encryption, 3600, 2);
    const key = `stale-${randomUUID()}`;
    const redisKey = keys.idempotency(token, key);
    // A claim as a process that died mid-request left it.
    let heldSeed: string | undefined;
    const held = idem.run(request(key), token, ({ seed }) => {
      heldSeed = seed;
      return new Promise<never>(() => undefined);
    });
    void held;
    // Its claim is stored before its run starts: the run having started is the event to wait for.
    await waitFor(() => heldSeed !== undefined, { intervalMs: 5, what: 'the held run started' });
    const busy = await idem.run(request(key), token, async () => accepted()).catch((err: unknown) => err);
    expect((busy as ApiError).status).to.equal(409);
    // Older than the stale bound (2 s): backdate it rather than wait.
    const stored = JSON.parse(
      encryption.openText((await redis.get(redisKey))!, storageContext(redisKey)),
    ) as {
      startedAt: number;
    };
    stored.startedAt -= 5_000;
    await redis.set(
      redisKey,
      encryption.sealText(JSON.stringify(stored), storageContext(redisKey)),
      'KEEPTTL',
    );
    const taken = await idem.run(request(key), token, async ({ seed }) => accepted(seed));
    expect(taken.body.messageId).to.equal(heldSeed);
    // Another body with the key is still a conflict.
    const other = await idem
      .run(request(key, { to: '15550009999', text: 'other' }), token, async () => accepted())
      .catch((err: unknown) => err);
    expect((other as ApiError).status).to.equal(422);
  });
});
