import { expect } from 'chai';
import { WebhookReceiver, sleep, useStack, waitFor, type InboxMessage } from '@mgw/testing';

const ADMIN_TOKEN = 'opt-out-admin-token-0123456789abcdef';

interface Sent {
  messageId: string;
}

/** The admin API's answers this suite reads (each route fills the fields of its own). */
interface AdminAnswer {
  success: boolean;
  error?: string;
  details: { path: string[] }[];
  data: {
    phone: string;
    optedOut: boolean;
    changed: boolean;
    total: number;
    numbers: { phone: string; optedOutAt: string }[];
    nextCursor?: string;
    overrides: Record<string, unknown>;
    settings: Record<string, unknown>;
  };
}

/**
 * Opt-outs end to end: contacts write keywords through the simulator to the account linked by the
 * real Baileys client; confirmations arrive in their simulator inboxes; sends to a suppressed
 * number fail `opted_out` with nothing reaching it; events reach a webhook receiver.
 */
describe('e2e: opt-outs — keywords, confirmations, the suppression list and its admin API (real services, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({
    notifier: true,
    env: {
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      WEBHOOK_SWEEP_MS: '500',
    },
  });
  const account = '15550810001';
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.startFor(stack());
    await stack().linkByQr(account, 'Opt-out Account');
  });
  after(async () => {
    await receiver?.close();
  });

  const admin = async (method: string, path: string, json?: unknown) => {
    const res = await fetch(`${stack().apiUrl}/api/admin/v1/devices/${stack().deviceId}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as AdminAnswer };
  };
  const write = (contact: string, text: string) =>
    stack().simApi('POST', `/contacts/${contact}/send`, { to: account, text });
  const inbox = (contact: string): Promise<InboxMessage[]> => stack().inbox(contact);
  const texts = async (contact: string) => (await inbox(contact)).map((m) => m.text);
  const arrives = (contact: string, count: number, what: string) =>
    waitFor(async () => (await inbox(contact)).length >= count, { timeoutMs: 20_000, what });
  const send = async (to: string, text: string): Promise<Sent> => {
    const res = await stack().api<Sent>('POST', '/send', { to, text });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body;
  };
  const settled = async (messageId: string) => {
    let record: Record<string, string> = {};
    await waitFor(
      async () => {
        record = (await stack().api<{ data: Record<string, string> }>('GET', `/messages/${messageId}`)).body
          .data;
        return record.status !== 'queued';
      },
      { timeoutMs: 20_000, what: `message ${messageId} settles` },
    );
    return record;
  };
  /** Numbers the account's devices asked WhatsApp about so far (the simulator counts them). */
  const lookups = async () => (await stack().contactLookups(account)).count;

  it('When a contact writes " stop " (lower case, spaces), then it gets one confirmation, the next /send to it fails opted_out and reaches nothing, an OTP still arrives, and START undoes it', async () => {
    const contact = '15550810002';
    await write(contact, '  stop  ');
    await arrives(contact, 1, 'the opt-out confirmation');
    expect(await texts(contact)).to.deep.equal([
      'You are unsubscribed and will get no more messages from us. Reply START to subscribe again.',
    ]);
    await waitFor(async () => receiver.events('contact.opted_out', (d) => d.phone === contact).length === 1, {
      timeoutMs: 15_000,
      what: 'contact.opted_out',
    });
    expect(receiver.events('contact.opted_out', (d) => d.phone === contact)[0]!.body.data).to.include({
      deviceId: stack().deviceId,
      phone: contact,
      source: 'keyword',
    });

    const refused = await send(contact, 'a campaign message');
    expect(await settled(refused.messageId)).to.include({ status: 'failed', error: 'opted_out' });
    await waitFor(
      async () => receiver.events('message.failed', (d) => d.messageId === refused.messageId).length === 1,
      { timeoutMs: 15_000, what: 'message.failed opted_out' },
    );
    // Writing STOP again changes nothing: no second confirmation, no second event.
    await write(contact, 'STOP');
    await sleep(1500);
    expect(await inbox(contact)).to.have.length(1);
    expect(receiver.events('contact.opted_out', (d) => d.phone === contact)).to.have.length(1);

    const otp = await stack().api<{ success: boolean }>('POST', '/otp', { phone: contact, code: '424242' });
    expect(otp.status, JSON.stringify(otp.body)).to.equal(200);
    await arrives(contact, 2, 'the OTP');
    expect((await texts(contact))[1]).to.include('424242');

    await write(contact, 'START');
    await arrives(contact, 3, 'the opt-in confirmation');
    expect((await texts(contact))[2]).to.equal('You are subscribed again. Reply STOP to unsubscribe.');
    await waitFor(async () => receiver.events('contact.opted_in', (d) => d.phone === contact).length === 1, {
      timeoutMs: 15_000,
      what: 'contact.opted_in',
    });
    const allowed = await send(contact, 'welcome back');
    expect(await settled(allowed.messageId)).to.include({ status: 'sent' });
    await arrives(contact, 4, 'the message after START');
    expect((await texts(contact))[3]).to.equal('welcome back');
  });

  it('When a contact writes an Arabic keyword (either alef), then it gets the Arabic confirmation, and ابدأ gets the Arabic opt-in', async () => {
    const contact = '15550810003';
    await write(contact, 'الغاء');
    await arrives(contact, 1, 'the Arabic confirmation');
    expect(await texts(contact)).to.deep.equal([
      'تم إلغاء اشتراكك ولن تصلك رسائل أخرى منا. أرسل ابدأ لإعادة الاشتراك.',
    ]);
    await write(contact, ' ابدأ ');
    await arrives(contact, 2, 'the Arabic opt-in confirmation');
    expect((await texts(contact))[1]).to.equal('تمت إعادة اشتراكك. أرسل توقف لإلغاء الاشتراك.');
  });

  it('When the confirmation is switched off and the keywords changed, then a custom keyword suppresses with no message sent, and the default STOP is an ordinary message', async () => {
    const put = await admin('PUT', '/opt-out-settings', { confirmation: false, optOutKeywords: ['BASTA'] });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data.overrides).to.deep.equal({ confirmation: false, optOutKeywords: ['BASTA'] });
    const quiet = '15550810004';
    await write(quiet, 'Basta');
    await waitFor(async () => receiver.events('contact.opted_out', (d) => d.phone === quiet).length === 1, {
      timeoutMs: 15_000,
      what: 'contact.opted_out without a confirmation',
    });
    const other = '15550810005';
    await write(other, 'STOP');
    await sleep(1500);
    expect(await inbox(quiet)).to.deep.equal([]);
    expect(await inbox(other)).to.deep.equal([]);
    const list = await admin('GET', '/opt-outs');
    const phones = (list.body.data.numbers as { phone: string }[]).map((n) => n.phone);
    expect(phones).to.include(quiet);
    expect(phones).not.to.include(other);
    const back = await admin('PUT', '/opt-out-settings', { confirmation: null, optOutKeywords: null });
    expect(back.body.data.overrides).to.deep.equal({});
  });

  it('When an operator adds a number through the admin API, then a send to it fails opted_out without a lookup, the list pages through it, and removing it lets sends through', async () => {
    const phone = '15550810006';
    const bad = await admin('POST', '/opt-outs', { phone: '+1 555' });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.include({ success: false, error: 'Invalid request data' });
    expect((await admin('POST', '/opt-outs', { phone: '0123@lid' })).status, 'not a LID').to.equal(400);
    // A contact known by its LID is added and removed by it (the LID in the path).
    const lid = '900000000000001@lid';
    expect((await admin('POST', '/opt-outs', { phone: lid })).body.data).to.deep.equal({
      phone: lid,
      optedOut: true,
      changed: true,
    });
    expect((await admin('DELETE', `/opt-outs/${lid}`)).body.data.changed).to.equal(true);
    const added = await admin('POST', '/opt-outs', { phone });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    expect(added.body.data).to.deep.equal({ phone, optedOut: true, changed: true });
    expect((await admin('POST', '/opt-outs', { phone })).body.data.changed).to.equal(false);
    await waitFor(
      async () =>
        receiver.events('contact.opted_out', (d) => d.phone === phone && d.source === 'admin').length === 1,
      { timeoutMs: 15_000, what: 'contact.opted_out by admin' },
    );

    const lookupsBefore = await lookups();
    const refused = await send(phone, 'not for you');
    expect(await settled(refused.messageId)).to.include({ status: 'failed', error: 'opted_out' });
    expect(await inbox(phone)).to.deep.equal([]);
    expect(await lookups(), 'numbers asked of WhatsApp').to.equal(lookupsBefore);

    // Pages of one, newest first, through every suppressed number.
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await admin('GET', `/opt-outs?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      seen.push(...(page.body.data.numbers as { phone: string }[]).map((n) => n.phone));
      cursor = page.body.data.nextCursor as string | undefined;
      if (!cursor) break;
    }
    const all = await admin('GET', '/opt-outs');
    expect(seen).to.deep.equal((all.body.data.numbers as { phone: string }[]).map((n) => n.phone));
    expect(seen[0]).to.equal(phone);
    expect(all.body.data.total).to.equal(seen.length);
    expect((await admin('GET', '/opt-outs?cursor=nope')).status).to.equal(400);

    const removed = await admin('DELETE', `/opt-outs/${phone}`);
    expect(removed.body.data).to.deep.equal({ phone, optedOut: false, changed: true });
    await waitFor(
      async () =>
        receiver.events('contact.opted_in', (d) => d.phone === phone && d.source === 'admin').length === 1,
      { timeoutMs: 15_000, what: 'contact.opted_in by admin' },
    );
    const allowed = await send(phone, 'now you may');
    expect(await settled(allowed.messageId)).to.include({ status: 'sent' });
    await arrives(phone, 1, 'the message after removal');
  });

  it('When opt-out settings are not valid, then 400 with details and nothing changes', async () => {
    const clash = await admin('PUT', '/opt-out-settings', { optInKeywords: ['stop'] });
    expect(clash.status).to.equal(400);
    expect(clash.body.details[0]!.path).to.deep.equal(['optInKeywords']);
    const tooLong = await admin('PUT', '/opt-out-settings', {
      optOutTextEn: 'x'.repeat(1001),
      optOutKeywords: [' '],
    });
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.details.length).to.be.at.least(2);
    const now = await admin('GET', '/opt-out-settings');
    expect(now.body.data.overrides).to.deep.equal({});
    expect(now.body.data.settings.optOutKeywords).to.deep.equal(['STOP', 'UNSUBSCRIBE', 'إلغاء', 'توقف']);
  });
});
