import { expect } from 'chai';
import { useStack, waitFor } from '@mgw/testing';

describe('e2e: receipts that arrive at once (real services, simulator answering within Baileys’ event buffer)', function () {
  this.timeout(120_000);
  // Delivered and read within a few ms of the send: Baileys folds such receipts into the upsert of
  // the sent message instead of emitting messages.update for them.
  const stack = useStack({ sim: { receiptDelayMs: 0, readDelayMs: 1 } });
  const account = '15550800001';

  before(async () => {
    await stack().linkByQr(account);
  });

  it('When texts are read by their contacts at once, then every record still ends read', async () => {
    const to = Array.from({ length: 20 }, (_, i) => `155509${String(i).padStart(5, '0')}`);
    const ids: string[] = [];
    for (const contact of to) {
      const res = await stack().api<{ messageId: string }>('POST', '/send', { to: contact, text: 'hi' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      ids.push(res.body.messageId);
    }
    const statuses = async () =>
      Promise.all(
        ids.map(
          async (id) =>
            (await stack().api<{ data: { status: string } }>('GET', `/messages/${id}`)).body.data.status,
        ),
      );
    await waitFor(async () => (await statuses()).every((s) => s === 'read'), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'every message read',
    }).catch(async (err: Error) => {
      const records = await Promise.all(
        ids.map(async (id) => (await stack().api<{ data: object }>('GET', `/messages/${id}`)).body.data),
      );
      throw new Error(`${err.message}: ${JSON.stringify(records.filter((r) => !('readAt' in r)))}`);
    });
    for (let i = 0; i < to.length; i++) expect(await stack().inbox(to[i]!), to[i]).to.have.length(1);
  });
});
