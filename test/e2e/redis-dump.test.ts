/**
 * What an attacker with a copy of Redis (a dump, an AOF, a backup) learns: after linking a device
 * and sending a text, an OTP and a base64 attachment through the real services (and scheduling a
 * personalised list; the sent text is kept for the dashboard), no value of any
 * key — strings, hashes, lists, sets, sorted sets, streams, BullMQ's jobs and event streams
 * included — holds the text, the OTP code, the attachment bytes or the account's private keys.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { Encryption, storageContext } from '@mgw/store';
import { useSharedStack, waitFor } from '@mgw/testing';

/** Every byte Redis holds for the keys of this stack's database, as one buffer per value. */
async function dump(redis: Redis): Promise<Buffer[]> {
  const values: Buffer[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'COUNT', 500);
    cursor = next;
    for (const key of found) {
      values.push(Buffer.from(key));
      const type = await redis.type(key);
      if (type === 'string') values.push((await redis.getBuffer(key))!);
      else if (type === 'hash')
        values.push(...(await redis.hgetallBuffer(key).then((h) => Object.values(h))));
      else if (type === 'list') values.push(...(await redis.lrangeBuffer(key, 0, -1)));
      else if (type === 'set') values.push(...(await redis.smembersBuffer(key)));
      else if (type === 'zset') values.push(...(await redis.zrangeBuffer(key, 0, -1)));
      else if (type === 'stream') {
        const entries = (await redis.xrangeBuffer(key, '-', '+')) as [Buffer, Buffer[]][];
        for (const [, fields] of entries) values.push(...fields);
      }
    }
  } while (cursor !== '0');
  return values;
}

/** The forms a secret could take in a stored value: raw, base64, hex. */
function forms(secret: Buffer | string): Buffer[] {
  const b = Buffer.isBuffer(secret) ? secret : Buffer.from(secret);
  return [b, Buffer.from(b.toString('base64')), Buffer.from(b.toString('hex'))];
}

describe('e2e: a Redis dump shows no message text, OTP code, attachment or credential', function () {
  this.timeout(180_000);
  const stack = useSharedStack();

  it('When a text, an OTP and a base64 attachment were sent, then no Redis value holds any of them or a private key', async () => {
    await stack().linkByQr('15550700001', 'Dump Account');
    const text = `confidential order note ${randomBytes(6).toString('hex')}`;
    const code = String(10_000_000 + Math.floor(Math.random() * 89_999_999));
    const file = randomBytes(4096);
    const sent = await stack().api<{ messageIds: string[] }>('POST', '/send', {
      to: ['15550700002', '15550700003'],
      text,
      attachment: { type: 'document', base64: file.toString('base64'), filename: 'a.bin' },
    });
    expect(sent.status).to.equal(202);
    // A personalised list scheduled an hour ahead: its text and variables wait in Redis, sealed.
    const varValue = `Ana ${randomBytes(6).toString('hex')}`;
    const personal = await stack().api('POST', '/send', {
      to: [{ phone: '15550700004', vars: { name: varValue } }],
      text: `dear {{name}}, ${text}`,
      sendAt: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect(personal.status).to.equal(202);
    const otp = await stack().api('POST', '/otp', { phone: '15550700002', code });
    expect(otp.status).to.equal(200);
    await waitFor(async () => (await stack().inbox('15550700003')).length >= 1, {
      what: 'the list delivered',
    });

    // The sent list's text stays for its records (the dashboard shows what each message said),
    // without its attachment bytes: in the dump below, sealed like the rest.
    const record = keys.message(stack().deviceId, sent.body.messageIds[1]!);
    await waitFor(async () => (await stack().redis.hget(record, 'settled')) === '1', { what: 'settled' });
    const contentKey = keys.content(stack().deviceId, (await stack().redis.hget(record, 'contentId'))!);
    expect(await stack().redis.hexists(contentKey, 'body'), 'the text is kept').to.equal(1);
    expect(await stack().redis.hexists(contentKey, 'media'), 'the bytes are not').to.equal(0);

    const enc = Encryption.fromEnv();
    const credsKey = keys.authCreds(stack().deviceId);
    const creds = JSON.parse(
      enc.openText((await stack().redis.get(credsKey))!, storageContext(credsKey)),
      (_k, v) => (v && v.type === 'Buffer' ? Buffer.from(v.data, 'base64') : v),
    ) as { noiseKey: { private: Buffer }; signedIdentityKey: { private: Buffer } };
    const secrets: [string, Buffer | string][] = [
      ['text', text],
      ['a variable of a scheduled personalised list', varValue],
      ['otp code', `*${code}*`],
      ['otp code alone', code],
      ['attachment', file.subarray(0, 64)],
      ['noise private key', creds.noiseKey.private],
      ['identity private key', creds.signedIdentityKey.private],
    ];
    // A stack on one server (no redisCluster option).
    const values = await dump(stack().redis as Redis);
    expect(values.length).to.be.greaterThan(50);
    for (const [name, secret] of secrets) {
      const leaks = values.filter((v) => forms(secret).some((f) => v.includes(f)));
      expect(leaks.length, `${name} found in ${leaks.length} value(s)`).to.equal(0);
    }
  });
});
