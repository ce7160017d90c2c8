import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { writeOverrides } from '@mgw/store';
import { WebhookReceiver, useStack, waitFor } from '@mgw/testing';

interface ContactView {
  phone: string;
  lid: string;
  addressing: string;
  hidePhone: boolean;
}
type Data = Record<string, unknown>;

describe('e2e: contacts known by their LID — hidden numbers, LID-addressed chats, lid-mapping notifications (real services with the notifier, simulator)', function () {
  this.timeout(150_000);
  const stack = useStack({
    notifier: true,
    sim: { receiptDelayMs: 50, readDelayMs: 150 },
    env: {
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      WEBHOOK_RETRY_BASE_MS: '300',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_SWEEP_MS: '500',
    },
  });
  const account = '15550810001';
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
    await stack().linkByQr(account);
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    expect(hook.status).to.equal(200);
    receiver.secrets = [hook.body.data.secret];
  });
  after(async () => {
    await receiver?.close();
  });

  async function contact(phone: string, extra: Data): Promise<ContactView & { lidJid: string }> {
    const view = await stack().simApi<ContactView>('POST', '/contacts', { phone, ...extra });
    return { ...view, lidJid: `${view.lid}@lid` };
  }
  /** The contact writes `text` to the account; answers the message.received event's data. */
  async function writes(phone: string, text: string): Promise<Data> {
    const { id } = await stack().simApi<{ id: string }>('POST', `/contacts/${phone}/send`, {
      to: account,
      text,
    });
    await waitFor(
      async () => receiver.events('message.received', (d) => d.platformMessageId === id).length > 0,
      {
        what: 'message.received',
      },
    );
    return receiver.events('message.received', (d) => d.platformMessageId === id)[0]!.body.data;
  }
  async function send(to: string, text: string): Promise<string> {
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to, text });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageId;
  }
  async function record(id: string): Promise<Data> {
    return (await stack().api<{ data: Data }>('GET', `/messages/${id}`)).body.data;
  }
  async function until(id: string, status: string): Promise<Data> {
    await waitFor(async () => (await record(id)).status === status, { what: `${id} ${status}` });
    return record(id);
  }
  const eventsOf = (messageId: string) =>
    receiver.accepted().filter((d) => d.body.data.messageId === messageId);
  async function eventsUpTo(messageId: string, last: string): Promise<Data[]> {
    await waitFor(async () => eventsOf(messageId).some((d) => d.body.type === last), { what: last });
    return eventsOf(messageId).map((d) => ({ type: d.body.type, ...d.body.data }));
  }

  it('When a contact that hides its number writes, then message.received has its LID and the text (no from); a reply to "<lid>@lid" arrives in its inbox once and its receipts make the record read', async () => {
    const hidden = await contact('15550810002', { hidePhone: true });
    expect(hidden).to.include({ hidePhone: true, addressing: 'lid' });
    const got = await writes(hidden.phone, 'hello, my number is mine');
    expect(got.contact).to.deep.equal({ lid: hidden.lidJid });
    expect(got).to.not.have.property('from');
    expect(got.text).to.equal('hello, my number is mine');
    const kept = await record(got.messageId as string);
    expect(kept).to.include({ direction: 'inbound', text: 'hello, my number is mine' });
    expect(kept.contact).to.deep.equal({ lid: hidden.lidJid });
    expect(kept).to.not.have.property('from');

    const reply = await send(hidden.lidJid, 'thanks, we read you');
    const read = await until(reply, 'read');
    expect(read).to.include({ to: hidden.lidJid });
    expect(read.contact).to.deep.equal({ lid: hidden.lidJid });
    const inbox = await stack().inbox(hidden.phone);
    expect(inbox.map((m) => [m.id, m.text, m.duplicates ?? 0])).to.deep.equal([
      [read.platformMessageId, 'thanks, we read you', 0],
    ]);
    const events = await eventsUpTo(reply, 'message.read');
    expect(events.map((e) => e.type)).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
    for (const e of events) expect(e.contact, String(e.type)).to.deep.equal({ lid: hidden.lidJid });

    // A LID the device never met is refused without asking WhatsApp.
    const stranger = await send('987654321012345@lid', 'who are you?');
    expect(await until(stranger, 'failed')).to.include({ error: 'unknown_contact' });
  });

  it('When a contact whose chat is LID-addressed writes with its number known, then events carry both; a send to its phone arrives once and is read, and GET /messages shows both', async () => {
    const lidChat = await contact('15550810003', { addressing: 'lid' });
    expect(lidChat).to.include({ addressing: 'lid', hidePhone: false });
    const got = await writes(lidChat.phone, 'write me back');
    expect(got).to.include({ from: lidChat.phone, text: 'write me back' });
    expect(got.contact).to.deep.equal({ phone: lidChat.phone, lid: lidChat.lidJid });

    const id = await send(lidChat.phone, 'here we are');
    const read = await until(id, 'read');
    expect(read).to.include({ to: lidChat.phone });
    expect(read.contact).to.deep.equal({ phone: lidChat.phone, lid: lidChat.lidJid });
    const inbox = await stack().inbox(lidChat.phone);
    expect(inbox.map((m) => [m.id, m.duplicates ?? 0])).to.deep.equal([[read.platformMessageId, 0]]);
    const events = await eventsUpTo(id, 'message.read');
    expect(events.map((e) => e.type)).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
    for (const e of events)
      expect(e.contact, String(e.type)).to.deep.equal({ phone: lidChat.phone, lid: lidChat.lidJid });

    const page = await stack().api<{ data: { messages: Data[] } }>('GET', '/messages?limit=5');
    const listed = page.body.data.messages.filter((m) => m.messageId === id || m.messageId === got.messageId);
    expect(listed).to.have.length(2);
    for (const m of listed) expect(m.contact).to.deep.equal({ phone: lidChat.phone, lid: lidChat.lidJid });
  });

  it("When WhatsApp tells the device a contact's phone <-> LID pair (lid-mapping notification), then the map keeps it and a send to that LID goes and reads with both identities", async () => {
    const told = await contact('15550810004', {});
    const note = await stack().simApi<{ lid: string; devices: number }>(
      'POST',
      `/contacts/${told.phone}/lid-mapping`,
      {
        to: account,
      },
    );
    expect(note).to.deep.equal({ lid: told.lidJid, devices: 1 });
    await waitFor(
      async () =>
        (await stack().redis.hget(keys.contactIdentities(stack().deviceId), `l:${told.lid}`)) === told.phone,
      { what: 'the LID in the device map' },
    );
    const id = await send(told.lidJid, 'hello by LID');
    const read = await until(id, 'read');
    expect(read.contact).to.deep.equal({ phone: told.phone, lid: told.lidJid });
    expect((await stack().inbox(told.phone)).map((m) => m.text)).to.deep.equal(['hello by LID']);
  });

  it('When a LID-only chat wrote to the account, then a reply to it is no first contact, while a stranger waits for the first-contact cap', async () => {
    const status = await stack().api<{ sending: { firstContactsToday: number } }>('GET', '/status');
    // No first contact left in this window.
    await writeOverrides(stack().redis, stack().deviceId, {
      firstContactCap: Math.max(1, status.body.sending.firstContactsToday),
    });
    try {
      if (status.body.sending.firstContactsToday === 0)
        await until(await send('15550810099', 'first'), 'read');
      const writer = await contact('15550810005', { hidePhone: true });
      await writes(writer.phone, 'it is me again');
      await waitFor(
        async () => (await stack().redis.sismember(keys.deviceChats(stack().deviceId), writer.lidJid)) === 1,
        {
          what: 'the LID chat remembered',
        },
      );
      const stranger = await send('15550810006', 'hello stranger');
      const reply = await send(writer.lidJid, 'a reply is no first contact');
      await until(reply, 'read');
      await waitFor(async () => (await record(stranger)).held !== undefined, { what: 'the stranger held' });
      const held = await record(stranger);
      expect(held.status).to.equal('queued');
      expect((held.held as { reason: string }).reason).to.equal('first_contact_cap');
    } finally {
      await writeOverrides(stack().redis, stack().deviceId, { firstContactCap: null });
    }
  });

  it('When a contact known only by its LID writes STOP, then its LID is suppressed: contact.opted_out names the LID, the confirmation reaches it, and the next send to the LID fails opted_out', async () => {
    const quitter = await contact('15550810007', { hidePhone: true });
    await writes(quitter.phone, 'STOP');
    await waitFor(
      async () => receiver.events('contact.opted_out', (d) => d.phone === quitter.lidJid).length === 1,
      { what: 'contact.opted_out by LID' },
    );
    expect(receiver.events('contact.opted_out', (d) => d.phone === quitter.lidJid)[0]!.body.data).to.include({
      source: 'keyword',
    });
    await waitFor(async () => (await stack().inbox(quitter.phone)).length === 1, {
      what: 'the confirmation',
    });
    const refused = await send(quitter.lidJid, 'one more offer');
    expect(await until(refused, 'failed')).to.include({ error: 'opted_out' });
    expect(await stack().inbox(quitter.phone)).to.have.length(1);
  });

  it('When a LID-addressed contact whose number is known writes STOP, then it is suppressed by its phone and a send to its LID fails opted_out too (one identity)', async () => {
    const quitter = await contact('15550810008', { addressing: 'lid' });
    await writes(quitter.phone, 'STOP');
    await waitFor(
      async () => receiver.events('contact.opted_out', (d) => d.phone === quitter.phone).length === 1,
      { what: 'contact.opted_out by phone' },
    );
    expect(
      receiver.events('contact.opted_out', (d) => d.phone === quitter.phone)[0]!.body.data.contact,
    ).to.deep.equal({ phone: quitter.phone, lid: quitter.lidJid });
    await waitFor(async () => (await stack().inbox(quitter.phone)).length === 1, {
      what: 'the confirmation',
    });
    const refused = await send(quitter.lidJid, 'an offer by LID');
    expect(await until(refused, 'failed')).to.include({ error: 'opted_out' });
    expect(await stack().inbox(quitter.phone)).to.have.length(1);
  });

  it('When a LID-only contact edits and deletes its message, then the record follows with its LID on the events; our text to a phone is edited and reacted to by the LID', async () => {
    const hidden = await contact('15550810009', { hidePhone: true });
    const got = await writes(hidden.phone, 'draft');
    const inboundId = got.messageId as string;
    const revise = (text?: string) =>
      stack().simApi('POST', `/contacts/${hidden.phone}/revise`, {
        to: account,
        id: got.platformMessageId,
        ...(text ? { text } : {}),
      });
    await revise('final');
    await waitFor(
      async () => receiver.events('message.edited', (d) => d.messageId === inboundId).length === 1,
      {
        what: 'message.edited from a LID chat',
      },
    );
    const edited = receiver.events('message.edited', (d) => d.messageId === inboundId)[0]!.body.data;
    expect(edited).to.include({ direction: 'inbound', text: 'final' });
    expect(edited).to.not.have.property('from');
    expect(edited.contact).to.deep.equal({ lid: hidden.lidJid });
    expect(await record(inboundId)).to.include({ text: 'final' });
    await revise();
    await waitFor(
      async () => receiver.events('message.deleted', (d) => d.messageId === inboundId).length === 1,
      {
        what: 'message.deleted from a LID chat',
      },
    );
    expect(
      receiver.events('message.deleted', (d) => d.messageId === inboundId)[0]!.body.data.contact,
    ).to.deep.equal({
      lid: hidden.lidJid,
    });
    expect(await record(inboundId)).to.have.property('deletedAt');

    const paired = await contact('15550810010', { addressing: 'lid' });
    await writes(paired.phone, 'hi');
    const id = await send(paired.phone, 'price: 10');
    const sent = await until(id, 'read');
    const edit = await stack().api('POST', '/send', {
      to: paired.lidJid,
      edit: { messageId: id, text: 'price: 12' },
    });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(202);
    const react = await stack().api('POST', '/send', {
      to: paired.lidJid,
      reaction: { messageId: id, emoji: '✅' },
    });
    expect(react.status, JSON.stringify(react.body)).to.equal(202);
    await waitFor(
      async () => {
        const inbox = await stack().inbox(paired.phone);
        return (
          inbox.some((m) => m.id === sent.platformMessageId && m.editedText === 'price: 12') &&
          inbox.some((m) => m.type === 'reaction' && m.targetId === sent.platformMessageId)
        );
      },
      { what: 'the edit and the reaction by LID at the contact' },
    );
    const wrong = await stack().api('POST', '/send', {
      to: '15550810011',
      edit: { messageId: id, text: 'x' },
    });
    expect(wrong.status).to.equal(400);
  });
});
