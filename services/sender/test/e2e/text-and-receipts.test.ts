import { expect } from 'chai';
import { Stack, waitFor } from '../../../../test/e2e/harness.js';

describe('e2e: link by QR, send a text, receipts (real services, simulator)', function () {
  this.timeout(120_000);
  let stack: Stack;
  const account = '15550100001';
  const contact = '15550100002';

  before(async () => {
    stack = await Stack.start();
  });
  after(async () => {
    await stack?.stop();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.error(stack.dumpLogs(60));
  });

  it('When the phone scans the QR the API returned, then /status shows connected with phone, name and picture', async () => {
    const picture = 'https://pps.example.test/alice.jpg';
    await stack.simApi('POST', '/contacts', { phone: account, name: 'Alice Business', pictureUrl: picture });
    await stack.linkByQr(account, 'Alice Business');
    const status = await stack.waitForStatus('connected');
    expect(status).to.include({ success: true, status: 'connected', phone: account, name: 'Alice Business' });
    expect(status.profilePic).to.equal(picture);
  });

  it('When a text is sent to one recipient, then the inbox holds exactly it and the record goes sent → delivered → read', async () => {
    const text = `hello ${Date.now()}`;
    const sent = await stack.api<{ success: boolean; messageId: string }>('POST', '/send', {
      to: contact,
      text,
    });
    expect(sent.body.success).to.equal(true);
    const id = sent.body.messageId;
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const r = await stack.api<{ message: { status: string } }>('GET', `/messages/${id}`);
        seen.add(r.body.message.status);
        return r.body.message.status === 'read';
      },
      { timeoutMs: 30_000, what: 'read receipt', intervalMs: 50 },
    );
    const record = (await stack.api<{ message: Record<string, string> }>('GET', `/messages/${id}`)).body
      .message;
    expect(record.sentAt).to.be.a('string');
    expect(record.deliveredAt).to.be.a('string');
    expect(record.readAt).to.be.a('string');
    const inbox = await stack.inbox(contact);
    expect(inbox.filter((m) => m.text === text)).to.have.length(1);
    expect(inbox.find((m) => m.text === text)!.id).to.equal(record.platformMessageId);
  });
});
