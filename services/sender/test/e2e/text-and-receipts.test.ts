import { expect } from 'chai';
import { PRIORITY } from '@mgw/contracts';
import { MessageStore } from '@mgw/store';
import { queueMessages, useStack, waitFor } from '@mgw/testing';

describe('e2e: link by QR, send a text, receipts (real services, simulator)', function () {
  this.timeout(120_000);
  const stack = useStack();
  const account = '15550100001';
  const contact = '15550100002';

  it('When the phone scans the QR the API returned, then /status shows connected with phone, name and picture', async () => {
    const picture = 'https://pps.example.test/alice.jpg';
    await stack().simApi('POST', '/contacts', {
      phone: account,
      name: 'Alice Business',
      pictureUrl: picture,
    });
    await stack().linkByQr(account, 'Alice Business');
    const status = await stack().waitForStatus('connected');
    expect(status).to.include({ success: true, status: 'connected', phone: account, name: 'Alice Business' });
    // The pairing says connected first; the sender's socket adds the picture once it opened.
    await waitFor(
      async () => (await stack().api<{ profilePic?: string }>('GET', '/status')).body.profilePic === picture,
      {
        what: 'the profile picture in the status',
      },
    );
  });

  it('When a text is sent to one recipient, then the inbox holds exactly it and the record goes sent → delivered → read', async () => {
    const text = `hello ${Date.now()}`;
    const sent = await stack().api<{ success: boolean; messageId: string }>('POST', '/send', {
      to: contact,
      text,
    });
    expect(sent.body.success).to.equal(true);
    const id = sent.body.messageId;
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const r = await stack().api<{ data: { status: string } }>('GET', `/messages/${id}`);
        seen.add(r.body.data.status);
        return r.body.data.status === 'read';
      },
      { timeoutMs: 30_000, what: 'read receipt', intervalMs: 50 },
    );
    const record = (await stack().api<{ data: Record<string, string> }>('GET', `/messages/${id}`)).body.data;
    expect(record.sentAt).to.be.a('string');
    expect(record.deliveredAt).to.be.a('string');
    expect(record.readAt).to.be.a('string');
    const inbox = await stack().inbox(contact);
    expect(inbox.filter((m) => m.text === text)).to.have.length(1);
    expect(inbox.find((m) => m.text === text)!.id).to.equal(record.platformMessageId);
  });

  it('When a job runs again for a message already sent (crash after the send), then it completes with the stored result and sends nothing', async () => {
    const store = new MessageStore(stack().redis, 3600);
    const contact = '15550100003';
    const { jobs, queue } = await queueMessages({
      redis: stack().redis,
      deviceId: stack().deviceId,
      to: [contact],
      content: { text: 'must not go twice' },
      hold: true, // the job is added below, once the message counts as sent
    });
    const data = jobs[0]!;
    const { messageId, platformMessageId } = data;
    const sentAt = new Date(Date.now() - 5000);
    await store.claim(data);
    await store.markSent(data, sentAt);
    const job = await queue.add('send', data, { jobId: messageId, priority: PRIORITY.send });
    let state = '';
    await waitFor(async () => (state = await job.getState()) === 'completed' || state === 'failed', {
      what: 'job finished',
    });
    const done = (await queue.getJob(messageId))!;
    expect(state).to.equal('completed');
    expect(done.returnvalue).to.deep.equal({
      messageId,
      platformMessageId,
      phone: contact,
      sentAt: sentAt.toISOString(),
    });
    expect(await stack().inbox(contact)).to.deep.equal([]);
    await queue.close();
  });

  it('When the sender is scraped, then /metrics shows the lease, the connected device and the messages by status', async () => {
    const sender = stack().senders()[0]!;
    const text = await (await fetch(`http://127.0.0.1:${sender.port}/metrics`)).text();
    expect(text).to.match(/^mgw_leases_held 1$/m);
    expect(text).to.include(`mgw_device_connection_state{device="${stack().deviceId}",state="connected"} 1`);
    expect(text).to.match(/^mgw_messages_total\{status="sent"\} [1-9]/m);
    expect(text).to.match(/^mgw_messages_total\{status="read"\} [1-9]/m);
    expect(text).to.match(/^mgw_send_latency_seconds_count\{kind="send"\} [1-9]/m);
    expect(text).to.match(/^mgw_jobs_completed_total\{queue_type="send",kind="send"\} [1-9]/m);
  });
});
