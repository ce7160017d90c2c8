import { expect } from 'chai';
import { proto, type BinaryNode } from '@whiskeysockets/baileys';
import { createLogger } from '@mgw/common';
import { RetryAnswers, type RetryAsk } from '../../src/retry-answers.js';

/**
 * The gateway's part of answering retry receipts, between Baileys' hooks (the end-to-end tests in
 * services/sender/test/e2e/retry-receipts.test.ts run it inside the real client).
 */
describe('messenger: answering retry receipts (RetryAnswers)', () => {
  const logger = createLogger({ level: 'error', service: 'test' });
  const receipt = (id: string, count = 1, keys = false): BinaryNode => ({
    tag: 'receipt',
    attrs: { id, type: 'retry', from: '15550001111@s.whatsapp.net' },
    content: [
      { tag: 'retry', attrs: { count: String(count), id, t: '1', v: '1' } },
      { tag: 'registration', attrs: {}, content: Buffer.from([0, 0, 0, 7]) },
      ...(keys ? [{ tag: 'keys', attrs: {}, content: [] }] : []),
    ],
  });
  const stored = () => proto.Message.create({ conversation: 'hi' });

  function answers(decide: (ask: RetryAsk) => boolean) {
    const asks: RetryAsk[] = [];
    const answered: string[] = [];
    const unavailable: string[] = [];
    const a = new RetryAnswers(
      {
        max: 5,
        ask: async (ask) => {
          asks.push(ask);
          return decide(ask);
        },
        answered: (id) => answered.push(id),
        unavailable: (id) => unavailable.push(id),
      },
      logger,
      'dev-1',
    );
    return { a, asks, answered, unavailable };
  }

  it('When a retry receipt is allowed, then getMessage hands out the stored message and its re-send counts as answered once', async () => {
    const { a, asks, answered } = answers(() => true);
    a.onRetryReceipt(receipt('ID1', 2, true));
    expect(asks).to.have.length(1);
    expect(asks[0]).to.include({
      platformMessageId: 'ID1',
      from: '15550001111@s.whatsapp.net',
      count: 2,
      withKeys: true,
    });
    const message = await a.getMessage('ID1', async () => stored());
    expect(message?.conversation).to.equal('hi');
    expect(a.patch(message!)).to.equal(message);
    expect(a.patch(message!)).to.equal(message);
    // another message object (e.g. the copy for our own devices) is not the answer
    a.patch(stored());
    expect(answered).to.deep.equal(['ID1']);
  });

  it('When a retry receipt is refused, then getMessage gives Baileys nothing and no re-send is counted', async () => {
    const { a, answered } = answers(() => false);
    a.onRetryReceipt(receipt('ID2'));
    let loaded = 0;
    expect(
      await a.getMessage('ID2', async () => {
        loaded++;
        return stored();
      }),
    ).to.equal(undefined);
    expect(loaded).to.equal(0);
    expect(answered).to.deep.equal([]);
  });

  it('When getMessage is called with no retry pending (a poll vote reads its poll), then the stored message is loaded as ever', async () => {
    const { a, asks } = answers(() => false);
    const message = await a.getMessage('POLL', async () => stored());
    expect(message?.conversation).to.equal('hi');
    expect(asks).to.deep.equal([]);
  });

  it('When the stored message is gone (past the retention), then nothing is re-sent and it is reported unavailable', async () => {
    const { a, unavailable } = answers(() => true);
    a.onRetryReceipt(receipt('ID3'));
    expect(await a.getMessage('ID3', async () => undefined)).to.equal(undefined);
    expect(unavailable).to.deep.equal(['ID3']);
  });

  it("When Baileys counts retries, then it reads no count for our messages (the gateway's bound decides) and keeps counting the others", async () => {
    const { a } = answers(() => true);
    const cache = a.counterCache;
    await cache.set('THEIRS:15550002222@s.whatsapp.net', 3);
    expect(await cache.get('THEIRS:15550002222@s.whatsapp.net')).to.equal(3);
    a.onRetryReceipt(receipt('OURS'));
    await cache.set('OURS:15550001111@s.whatsapp.net', 4);
    expect(await cache.get('OURS:15550001111@s.whatsapp.net')).to.equal(undefined);
    await cache.del('THEIRS:15550002222@s.whatsapp.net');
    expect(await cache.get('THEIRS:15550002222@s.whatsapp.net')).to.equal(undefined);
  });

  it("When the account's own phone asks for its copy, then the ask is left to Baileys and not counted against the recipient", async () => {
    const asks: RetryAsk[] = [];
    const a = new RetryAnswers(
      { max: 5, ask: async (ask) => (asks.push(ask), false), answered: () => undefined },
      logger,
      'dev-1',
      (jid) => jid.startsWith('15559990000'),
    );
    a.onRetryReceipt({
      ...receipt('OWN'),
      attrs: { id: 'OWN', type: 'retry', from: '15559990000@s.whatsapp.net' },
    });
    expect(asks).to.deep.equal([]);
    expect((await a.getMessage('OWN', async () => stored()))?.conversation).to.equal('hi');
  });

  it('When the decision cannot be recorded (Redis away), then the retry is answered as Baileys would', async () => {
    const a = new RetryAnswers(
      { max: 5, ask: () => Promise.reject(new Error('redis down')), answered: () => undefined },
      logger,
      'dev-1',
    );
    a.onRetryReceipt(receipt('ID4'));
    expect((await a.getMessage('ID4', async () => stored()))?.conversation).to.equal('hi');
  });
});
