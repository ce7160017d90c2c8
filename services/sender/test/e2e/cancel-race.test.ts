import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { useSharedStack, waitFor } from '@mgw/testing';

interface Batch {
  batchId: string;
  total: number;
  state: string;
  counts: Record<string, number>;
}
type MessageView = Record<string, string>;

/** How a batch's message ended, beside when its send started (the claim's `sendingAt`, ms). */
interface Outcome {
  id: string;
  phone: string;
  status: string;
  error?: string;
  sentAt?: string;
  sendingAt?: number;
}

/**
 * What a 200 cancel promises (docs/batches.md "Cancel"): no message of the batch starts a send
 * after it. A send starts with its claim, the script that stamps `sendingAt` on the record once the
 * message's turn has come (before its encryption and socket write) and reads the batch's state in
 * the same step; `sentAt` is stamped when the write is done, so a message claimed just before the
 * cancel may read a `sentAt` after the 200 — legitimately. This test cancels batches at varied
 * moments with pacing off (the stack's default: no gap, no caps, 8 sends in flight) and checks
 * every message against the moment the 200 arrived. (Checked to fail: with the claim's batch check
 * and the cancel's sweep taken out, a send starts ~100 ms after the 200.)
 */
describe('e2e: a cancel answered 200 starts no further send of its batch (pacing off, batches cancelled at varied moments; real services, simulator)', function () {
  this.timeout(600_000);
  const stack = useSharedStack();
  const account = '15550810001';

  before(async () => {
    await stack().linkByQr(account);
  });

  const phones = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
  const sentOrBeyond = (s: string) => s === 'sent' || s === 'delivered' || s === 'read';
  async function batch(batchId: string): Promise<Batch> {
    return (await stack().api<{ data: Batch }>('GET', `/batches/${batchId}`)).body.data;
  }
  async function outcomes(ids: string[], to: string[]): Promise<Outcome[]> {
    return Promise.all(
      ids.map(async (id, i) => {
        const view = (await stack().api<{ data: MessageView }>('GET', `/messages/${id}`)).body.data;
        // The start of the send is internal to the record: the claim's stamp (ms, this machine's clock).
        const sendingAt = await stack().redis.hget(keys.message(stack().deviceId, id), 'sendingAt');
        return {
          id,
          phone: to[i]!,
          status: view.status!,
          error: view.error,
          sentAt: view.sentAt,
          sendingAt: sendingAt === null ? undefined : Number(sendingAt),
        };
      }),
    );
  }

  it('When 10 batches of 50 to 185 recipients are cancelled at varied moments, then every message either started its send before the 200 or ended failed / cancelled, none stays queued, and no cancelled one arrived', async () => {
    const batches = Array.from({ length: 10 }, (_, i) => ({
      size: 50 + i * 15,
      // How much of the batch has been sent when the cancel is asked: from nothing to most of it.
      progress: [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75][i]!,
    }));
    let sentAfterAnswer = 0;
    let latestSentAfterMs = 0;
    let startedBeforeAnswer = 0;
    let cancelled = 0;
    for (const [n, { size, progress }] of batches.entries()) {
      const to = phones(`155508${20 + n}`, size);
      const accepted = await stack().api<{ messageId: string; messageIds: string[] }>('POST', '/send', {
        to,
        text: `batch ${n}`,
      });
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
      const { messageId: batchId, messageIds: ids } = accepted.body;
      const target = Math.floor(size * progress);
      if (target > 0) {
        await waitFor(
          async () => {
            const c = (await batch(batchId)).counts;
            return c.sent! + c.delivered! + c.read! >= target;
          },
          { timeoutMs: 60_000, intervalMs: 5, what: `batch ${n}: ${target} of ${size} sent` },
        );
      }
      const res = await stack().api<{ data: Batch }>('POST', `/batches/${batchId}/cancel`);
      const answeredAt = Date.now();
      expect(res.status, `batch ${n}: ${JSON.stringify(res.body)}`).to.equal(200);
      expect(res.body.data.state).to.equal('cancelled');

      await waitFor(async () => (await batch(batchId)).counts.queued === 0, {
        timeoutMs: 60_000,
        what: `batch ${n}: no message queued`,
      });
      const ended = await outcomes(ids, to);
      for (const m of ended) {
        expect(m.status, `${m.id} queued`).to.not.equal('queued');
        if (m.sendingAt !== undefined && m.sendingAt <= answeredAt) {
          // Its send started before the 200: it may have gone (or failed on its own).
          startedBeforeAnswer++;
          if (m.sentAt && Date.parse(m.sentAt) > answeredAt) {
            sentAfterAnswer++;
            latestSentAfterMs = Math.max(latestSentAfterMs, Date.parse(m.sentAt) - answeredAt);
          }
          continue;
        }
        expect(m.sendingAt, `${m.id}: a send started ${m.sendingAt! - answeredAt} ms after the 200`).to.equal(
          undefined,
        );
        expect(m, m.id).to.include({ status: 'failed', error: 'cancelled' });
        cancelled++;
        expect(await stack().inbox(m.phone), `${m.phone} got a cancelled message`).to.deep.equal([]);
      }
      for (const m of ended.filter((e) => sentOrBeyond(e.status))) {
        expect((await stack().inbox(m.phone)).length, `${m.phone} got its message`).to.equal(1);
      }
      const b = await batch(batchId);
      expect(b.state).to.equal('cancelled');
      expect(b.counts.failed).to.be.at.least(ended.filter((e) => e.error === 'cancelled').length);
    }
    console.log(
      `      ${startedBeforeAnswer} sends started before their batch's 200 (${sentAfterAnswer} of them ` +
        `read a sentAt after it, at most ${latestSentAfterMs} ms), ${cancelled} messages ended cancelled`,
    );
    // The moments were varied enough to cancel something in every batch but the last few.
    expect(cancelled).to.be.above(0);
  });
});
