import { expect } from 'chai';
import { SANDBOX_NUMBER } from '@mgw/cloud-sim';
import { OPT_OUT_DEFAULTS, isOptedOut } from '@mgw/store';
import { useStack, waitFor } from '@mgw/testing';

/**
 * A contact's opt-out keyword to a Cloud API device, through the real services and the Cloud API
 * simulator: the simulator's user writes it, Meta's signed webhook brings it to the API, the
 * device's suppression list changes, and the confirmation is a message of the device that its
 * sender sends through the Graph API — free-form, since the keyword opened the contact's window —
 * as a linked device's holder confirms one (services/sender inbound/opt-outs.ts).
 */
describe('e2e: opt-out keywords to a Cloud API device are applied and confirmed (real services, Cloud API simulator)', function () {
  this.timeout(120_000);
  const stack = useStack({ cloud: true }, 90);
  const suffix = Math.random().toString(36).slice(2, 7);
  const deviceId = `cloud-optout-${suffix}`;
  let token: string;

  before(async () => {
    token = await stack().createToken(deviceId);
    await stack().configureSandboxCloud(token);
    expect((await stack().api('POST', '/connect', undefined, token)).body).to.deep.include({
      status: 'connected',
    });
    await stack().cloudSubscribed();
  });

  /** The texts the device sent to `phone`, as the simulator received them. */
  const textsTo = (phone: string) =>
    stack()
      .cloud.sent(SANDBOX_NUMBER.id)
      .filter((m) => m.waId === phone && m.type === 'text')
      .map((m) => (m.request.text as { body: string }).body);

  async function writes(phone: string, text: string): Promise<void> {
    const { id } = stack().cloud.inbound(SANDBOX_NUMBER.id, { from: phone, text });
    await waitFor(
      async () =>
        (
          (
            await stack().api<{ data?: { events?: { data: { platformMessageId?: string } }[] } }>(
              'GET',
              '/events?types=message.received',
              undefined,
              token,
            )
          ).body.data?.events ?? []
        ).some((e) => e.data.platformMessageId === id),
      { what: `the contact's "${text}" recorded` },
    );
  }

  it('When a contact writes STOP, then the number is suppressed and gets the confirmation once; a repeat changes nothing; START is confirmed too', async () => {
    const phone = '15550108001';
    await writes(phone, 'STOP');
    expect(await isOptedOut(stack().redis, deviceId, phone)).to.equal(true);
    await waitFor(() => textsTo(phone).length === 1, { what: 'the opt-out confirmation at the simulator' });
    expect(textsTo(phone)).to.deep.equal([OPT_OUT_DEFAULTS.optOutTextEn]);

    // Already off the list: no change, so no second confirmation (the keyword is still recorded).
    await writes(phone, 'stop');
    await writes(phone, 'START');
    expect(await isOptedOut(stack().redis, deviceId, phone)).to.equal(false);
    await waitFor(() => textsTo(phone).length === 2, { what: 'the opt-in confirmation at the simulator' });
    expect(textsTo(phone)).to.deep.equal([OPT_OUT_DEFAULTS.optOutTextEn, OPT_OUT_DEFAULTS.optInTextEn]);
  });

  it('When a contact writes an Arabic keyword, then the confirmation is the Arabic text', async () => {
    const phone = '15550108002';
    await writes(phone, 'توقف');
    await waitFor(() => textsTo(phone).length === 1, { what: 'the Arabic confirmation at the simulator' });
    expect(textsTo(phone)).to.deep.equal([OPT_OUT_DEFAULTS.optOutTextAr]);
    // The suppression it confirms stops a /send of the device to that contact (the window is
    // open, so the API takes it; the sender fails it without a Graph call).
    const sent = await stack().api<{ messageId: string }>(
      'POST',
      '/send',
      { to: phone, text: 'news' },
      token,
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    let record: { status: string; error?: string } | undefined;
    await waitFor(
      async () =>
        (record = (
          await stack().api<{ data: { status: string; error?: string } }>(
            'GET',
            `/messages/${sent.body.messageId}`,
            undefined,
            token,
          )
        ).body.data).status === 'failed',
      { what: 'the send to an opted-out contact failing' },
    );
    expect(record).to.include({ status: 'failed', error: 'opted_out' });
    expect(textsTo(phone)).to.deep.equal([OPT_OUT_DEFAULTS.optOutTextAr]);
  });
});
