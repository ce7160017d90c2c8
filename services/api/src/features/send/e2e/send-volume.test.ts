import { expect } from 'chai';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * What a big list costs Redis: its content once plus a job per recipient — never a copy of the
 * text per recipient (1,000 × 60,000 characters used to cost 220 MB).
 */
describe('POST /send at volume (real Redis)', function () {
  this.timeout(120_000);
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => {
    t = await startApi({ maxRecipients: 1000 });
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  after(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
    await t.close();
  });

  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await t.redis.info('memory'))?.[1]);
  const list = (round: number) =>
    Array.from({ length: 1000 }, (_, i) => String(15550000000 + round * 1000 + i));

  it('When a 1,000-recipient list carries a 60,000-character text, then Redis grows by the text once plus under 4 KiB per recipient; ten in a row never answer 5xx', async () => {
    const text = 'x'.repeat(60_000);
    const before = await usedMemory();
    const first = await call(`${t.api}/send`, { token, json: { to: list(0), text } });
    expect(first.status).to.equal(202);
    const perRecipient = ((await usedMemory()) - before - text.length) / 1000;
    console.log(`      (Redis growth beyond the text: ${Math.round(perRecipient)} bytes per recipient)`);
    expect(perRecipient).to.be.below(4096);

    const statuses = [first.status];
    for (let round = 1; round < 10; round++) {
      statuses.push((await call(`${t.api}/send`, { token, json: { to: list(round), text } })).status);
    }
    expect(statuses).to.deep.equal(Array.from({ length: 10 }, () => 202));
  });

  it('When a personalised 1,000-recipient list carries a 60,000-character text and three variables each, then Redis grows by the text once plus under 4 KiB per recipient', async () => {
    const text = `Hi {{name}}, your order {{order}} ships from {{city}}. ${'x'.repeat(60_000 - 60)}`;
    const to = list(20).map((phone, i) => ({
      phone,
      vars: { name: `Customer number ${i}`, order: `ORDER-${100_000 + i}`, city: 'Lisbon'.repeat(8) },
    }));
    const before = await usedMemory();
    const res = await call(`${t.api}/send`, { token, json: { to, text } });
    expect(res.status).to.equal(202);
    const perRecipient = ((await usedMemory()) - before - text.length) / 1000;
    console.log(
      `      (personalised: Redis growth beyond the text: ${Math.round(perRecipient)} bytes per recipient)`,
    );
    expect(perRecipient).to.be.below(4096);
  });
});
