import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { admitMessage } from '../src/policy/index.js';

const DAY = 86_400_000;

describe('store: a group message under the caps (one message, never a first contact; real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When a group message is admitted with the first-contact cap used up, then it goes, counts one message and no first contact', async () => {
    const d = `grp-${Math.random().toString(36).slice(2, 8)}`;
    const w = 1_700_000_000_000;
    const group = '120363012345678901@g.us';
    // The only first contact of the window is taken by a number.
    expect(await admitMessage(redis, d, '15550000001', w, DAY, 3, 1)).to.deep.equal({
      ok: true,
      first: true,
    });
    expect(await admitMessage(redis, d, '15550000002', w, DAY, 3, 1)).to.deep.equal({
      ok: false,
      cap: 'first_contact_cap',
    });
    // A group the account never wrote to is not a first contact.
    expect(await admitMessage(redis, d, group, w, DAY, 3, 1, true)).to.deep.equal({ ok: true, first: false });
    expect(await redis.hgetall(keys.deviceUsage(d, w))).to.deep.equal({ sent: '2', firstContacts: '1' });
    // It counts against the daily cap like any message: the third takes the last unit.
    expect(await admitMessage(redis, d, group, w, DAY, 3, 1, true)).to.deep.equal({ ok: true, first: false });
    expect(await admitMessage(redis, d, group, w, DAY, 3, 1, true)).to.deep.equal({
      ok: false,
      cap: 'daily_cap',
    });
  });
});
