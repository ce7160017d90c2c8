import { expect } from 'chai';
import { useStack, waitFor } from '@mgw/testing';

/**
 * A contact whose phone sends read receipts but no delivery receipts: what a read receipt that
 * overtakes its delivery one (or that Baileys merged with it) looks like to the gateway. The read
 * message was delivered too: its record, its events and the sender's counters say so, once.
 */
describe('e2e: a read receipt without its delivery receipt (real services, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({ sim: { receiptDelayMs: null, readDelayMs: 600 } });
  const account = '15550104001';
  const contact = '15550104002';
  type Event = { type: string; data: { messageId?: string; deliveredAt?: string; readAt?: string } };

  it('When only the read receipt comes, then the message is read and delivered at the same time, message.delivered is announced once before message.read, and /metrics counts it delivered', async () => {
    await stack().linkByQr(account, 'Read Only');
    const sent = await stack().api<{ messageId: string }>('POST', '/send', { to: contact, text: 'seen?' });
    expect(sent.status).to.equal(202);
    const id = sent.body.messageId;
    let record: Record<string, string> = {};
    await waitFor(
      async () =>
        (record = (await stack().api<{ data: Record<string, string> }>('GET', `/messages/${id}`)).body.data)
          .status === 'read',
      { timeoutMs: 30_000, what: 'the read receipt' },
    );
    expect(record.deliveredAt).to.equal(record.readAt);

    const events = (await stack().api<{ data: { events: Event[] } }>('GET', '/events')).body.data.events
      .filter((e) => e.data.messageId === id)
      .map((e) => e.type);
    expect(events).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);

    const sender = stack().senders()[0]!;
    const metrics = await (await fetch(`http://127.0.0.1:${sender.port}/metrics`)).text();
    expect(metrics).to.match(/^mgw_messages_total\{status="delivered"\} 1$/m);
    expect(metrics).to.match(/^mgw_messages_total\{status="read"\} 1$/m);
  });
});
