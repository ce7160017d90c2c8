import { expect } from 'chai';
import { renderOtp } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

interface OtpBody {
  success: boolean;
  data: Record<string, string>;
}

describe('e2e: a 500-recipient list (accepted in pieces), OTP in English and Arabic, numbers not on WhatsApp (real services, simulator)', function () {
  this.timeout(240_000);
  // Pieces of 100: the list is held until its fifth piece commits, then sent whole.
  const stack = useStack({
    sim: { receiptDelayMs: 400, readDelayMs: null },
    env: { ACCEPT_CHUNK_RECIPIENTS: '100' },
  });
  const account = '15550400001';

  before(async () => {
    await stack().linkByQr(account);
  });

  async function record(id: string): Promise<Record<string, string>> {
    return (await stack().api<{ data: Record<string, string> }>('GET', `/messages/${id}`)).body.data;
  }

  it('When a list of 500 is sent with an OTP right behind it, then each contact gets exactly one message with the recorded id and the OTP jumps the queue', async () => {
    const recipients = Array.from({ length: 500 }, (_, i) => `1555041${String(i).padStart(4, '0')}`);
    const res = await stack().api<{ success: boolean; messageId: string; messageIds: string[] }>(
      'POST',
      '/send',
      {
        to: recipients,
        text: 'list message',
      },
    );
    expect(res.body.success).to.equal(true);
    expect(res.body.messageIds).to.have.length(500);
    const otp = await stack().api<OtpBody>('POST', '/otp', { phone: '15550420001', code: '123456' });
    expect(otp.status, JSON.stringify(otp.body)).to.equal(200);

    const records: Record<string, string>[] = [];
    await waitFor(
      async () => {
        records.length = 0;
        for (const id of res.body.messageIds) records.push(await record(id));
        return records.every((r) => r.status !== 'queued');
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: 'every list message leaves queued' },
    );
    expect(records.filter((r) => r.status === 'failed')).to.deep.equal([]);
    // The OTP was enqueued after the 500 but went before most of them.
    const laterThanOtp = records.filter((r) => r.sentAt! > otp.body.data.sentAt!).length;
    expect(laterThanOtp).to.be.greaterThan(250);

    for (let i = 0; i < recipients.length; i++) {
      const inbox = await stack().inbox(recipients[i]!);
      expect(inbox, recipients[i]).to.have.length(1);
      expect(inbox[0]).to.include({ text: 'list message', id: records[i]!.platformMessageId });
    }
  });

  for (const [language, code] of [
    ['English', '4821'],
    ['Arabic', '90817263'],
  ] as const) {
    it(`When an OTP is sent in ${language}, then the response carries all six fields and the text is the template with the code in bold`, async () => {
      const phone = language === 'English' ? '15550420002' : '15550420003';
      const res = await stack().api<OtpBody>('POST', '/otp', { phone, code, language });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.data).to.include({ phone, code, language });
      expect(res.body.data.messageId).to.be.a('string');
      expect(res.body.data.platformMessageId).to.match(/^3EB0[0-9A-F]{18}$/);
      expect(new Date(res.body.data.sentAt!).toISOString()).to.equal(res.body.data.sentAt);
      await waitFor(async () => (await stack().inbox(phone)).length === 1, { what: 'OTP arrived' });
      const [got] = await stack().inbox(phone);
      expect(got!.text).to.equal(renderOtp(code, language));
      expect(got!.text!.startsWith(`*${code}*`)).to.equal(true);
      expect(got!.id).to.equal(res.body.data.platformMessageId);
    });
  }

  it('When the number is not on WhatsApp, then the message fails at once with not_on_whatsapp', async () => {
    await stack().simApi('POST', '/contacts', { phone: '15550420009', onWhatsApp: false });
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to: '15550420009', text: 'hi' });
    await waitFor(async () => (await record(res.body.messageId)).status === 'failed', { what: 'failed' });
    expect(await record(res.body.messageId)).to.include({ error: 'not_on_whatsapp' });
  });

  it('When WhatsApp acks a message with an error about the message (479), then it is not retried and fails with rejected_by_server', async () => {
    // 463 and 429 are about the account: they pause the device instead (account-safety suite).
    await stack().simApi('POST', '/faults/ack-error', { to: '15550420010', error: 479, count: 1 });
    const res = await stack().api<{ messageId: string }>('POST', '/send', {
      to: '15550420010',
      text: 'refused',
    });
    await waitFor(async () => (await record(res.body.messageId)).status === 'failed', { what: 'failed' });
    expect(await record(res.body.messageId)).to.include({ error: 'rejected_by_server' });
    // Not retried: a retry would have gone through (the fault was armed once) and reached the inbox.
    expect(await stack().inbox('15550420010')).to.deep.equal([]);
  });
});
