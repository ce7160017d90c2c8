import { expect } from 'chai';
import { parseVCard } from '@mgw/contracts';
import { WebhookReceiver, useStack, waitFor, type InboxMessage } from '@mgw/testing';

type Json = Record<string, unknown>;
interface Sent {
  success: boolean;
  messageId: string;
  messageIds?: string[];
  error?: string;
  details?: { path: (string | number)[]; message: string }[];
}
interface PollRecord {
  question: string;
  options: string[];
  multiple: boolean;
  tally: { option: string; votes: number }[];
  votes: { contact: { phone?: string }; options: string[] }[];
}

/**
 * Message kinds end to end: reactions, locations, contact cards and polls sent through the real
 * Baileys client arrive decoded at the simulated contacts; votes the simulated phones encrypt as
 * WhatsApp does are decrypted and tallied; contacts' reactions, locations and cards become events.
 */
describe('e2e: message kinds — reaction, location, contact cards, polls and votes (real services, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({
    notifier: true,
    env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1', WEBHOOK_SWEEP_MS: '500' },
  });
  const account = '15550910001';
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.startFor(stack());
    await stack().linkByQr(account, 'Kinds Account');
  });
  after(async () => {
    await receiver?.close();
  });

  const send = async (body: Json, status = 202): Promise<Sent> => {
    const res = await stack().api<Sent>('POST', '/send', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    return res.body;
  };
  const record = async <T = Json>(messageId: string): Promise<T & Json> =>
    (await stack().api<{ data: T & Json }>('GET', `/messages/${messageId}`)).body.data;
  const sent = async (messageId: string): Promise<Json> => {
    let r: Json = {};
    await waitFor(
      async () => ['sent', 'delivered', 'read'].includes(String((r = await record(messageId)).status)),
      {
        timeoutMs: 30_000,
        what: `message ${messageId} sent`,
      },
    );
    return r;
  };
  const arrived = async (phone: string, id: string): Promise<InboxMessage> => {
    let found: InboxMessage | undefined;
    await waitFor(async () => Boolean((found = (await stack().inbox(phone)).find((m) => m.id === id))), {
      timeoutMs: 20_000,
      what: `message ${id} at ${phone}`,
    });
    return found!;
  };
  const contactSends = (contact: string, body: Json) =>
    stack().simApi<{ id: string }>('POST', `/contacts/${contact}/send`, { to: account, ...body });
  const event = async (type: string, where: (d: Json) => boolean, what: string): Promise<Json> => {
    await waitFor(async () => receiver.events(type, where).length > 0, { timeoutMs: 20_000, what });
    return receiver.events(type, where)[0]!.body.data;
  };

  it('When a location is sent, then the contact gets exactly its coordinates, name and address, and the record shows it', async () => {
    const contact = '15550910002';
    const location = {
      latitude: -33.8567844,
      longitude: 151.213108,
      name: 'Sydney Opera House',
      address: 'Bennelong Point, Sydney NSW 2000',
    };
    const { messageId } = await send({ to: contact, location });
    const r = await sent(messageId);
    const got = await arrived(contact, String(r.platformMessageId));
    expect(got).to.include({ type: 'location', ...location });
    expect(r.location).to.deep.equal(location);
  });

  it('When contact cards with vCard special characters are sent, then the contact gets one vCard each, escaped, with exactly the fields sent and no extra line', async () => {
    const contact = '15550910003';
    const contacts = [
      {
        name: 'Doe, Jane; "JJ" \\ Jr',
        phones: ['15550910090', '447700900123'],
        email: 'jane@example.com',
        organization: 'ACME; Inc',
      },
      // A value trying to end its line and add a property is one escaped value.
      { name: 'Mallory END:VCARD', phones: ['15550910091'], organization: 'X\\nTEL:+1999' },
    ];
    const { messageId } = await send({ to: contact, contacts });
    const r = await sent(messageId);
    const got = await arrived(contact, String(r.platformMessageId));
    expect(got.type).to.equal('contacts');
    expect(got.vcards).to.have.length(2);
    expect(got.vcards!.map((v) => parseVCard(v))).to.deep.equal(contacts);
    for (const vcard of got.vcards!) {
      const lines = vcard.split('\n');
      expect(lines[0]).to.equal('BEGIN:VCARD');
      expect(lines.at(-1)).to.equal('END:VCARD');
      expect(lines.filter((l) => l === 'END:VCARD')).to.have.length(1);
      expect(lines.filter((l) => l.startsWith('TEL'))).to.have.length(vcard.includes('Mallory') ? 1 : 2);
    }
    expect(got.vcards![0]).to.include('FN:Doe\\, Jane\\; "JJ" \\\\ Jr');
    expect(r.contacts).to.deep.equal(contacts);
  });

  it('When we react to our message and to one the contact sent, then each reaction arrives with its emoji and target, "" removes it, and an unknown target is 404', async () => {
    const contact = '15550910004';
    const first = await send({ to: contact, text: 'react to this' });
    const target = await sent(first.messageId);
    const reaction = await send({ to: contact, reaction: { messageId: first.messageId, emoji: '👍🏽' } });
    const rr = await sent(reaction.messageId);
    expect(await arrived(contact, String(rr.platformMessageId))).to.include({
      type: 'reaction',
      emoji: '👍🏽',
      targetId: target.platformMessageId,
    });
    expect(rr.reaction).to.deep.equal({ messageId: first.messageId, emoji: '👍🏽' });
    const removal = await send({ to: contact, reaction: { messageId: first.messageId, emoji: '' } });
    const removed = await sent(removal.messageId);
    expect(await arrived(contact, String(removed.platformMessageId))).to.include({
      type: 'reaction',
      emoji: '',
    });

    // A message the contact sent us: we react to it (its id is ours, from message.received).
    const wrote = await contactSends(contact, { text: 'nice!' });
    const received = await event(
      'message.received',
      (d) => d.platformMessageId === wrote.id,
      'message.received',
    );
    const back = await send({ to: contact, reaction: { messageId: received.messageId, emoji: '❤️' } });
    const br = await sent(back.messageId);
    expect(await arrived(contact, String(br.platformMessageId))).to.include({
      type: 'reaction',
      emoji: '❤️',
      targetId: wrote.id,
    });

    const unknown = await send({ to: contact, reaction: { messageId: 'no-such-message', emoji: '👍' } }, 404);
    expect(unknown).to.include({ success: false, error: 'The message to react to was not found' });
    const otherChat = await send(
      { to: '15550910099', reaction: { messageId: first.messageId, emoji: '👍' } },
      400,
    );
    expect(otherChat.details?.[0]?.path).to.deep.equal(['to']);
  });

  it('When a poll goes to three contacts and each votes (encrypted as WhatsApp does), then each poll.vote event and each tally match the votes; a changed vote replaces the first', async () => {
    const contacts = ['15550910005', '15550910006', '15550910007'];
    const poll = { question: 'Lunch on Friday?', options: ['Pizza', 'Sushi', 'Tacos'] };
    const list = await send({ to: contacts, poll });
    const ids = list.messageIds!;
    const records = await Promise.all(ids.map((id) => sent(id)));
    const polls = await Promise.all(
      contacts.map((c, i) => arrived(c, String(records[i]!.platformMessageId))),
    );
    for (const p of polls)
      expect(p).to.include({ type: 'poll', question: poll.question, selectableCount: 1 });
    for (const p of polls) expect(p.options).to.deep.equal(poll.options);

    const choices = ['Pizza', 'Sushi', 'Pizza'];
    await Promise.all(
      contacts.map((c, i) => contactSends(c, { pollVote: { pollId: polls[i]!.id, options: [choices[i]] } })),
    );
    for (const [i, c] of contacts.entries()) {
      const vote = await event('poll.vote', (d) => d.messageId === ids[i], `poll.vote of ${c}`);
      expect(vote).to.deep.include({ contact: { phone: c }, options: [choices[i]] });
      const r = await record<{ poll: PollRecord }>(ids[i]!);
      expect(r.poll.tally).to.deep.equal(
        poll.options.map((o) => ({ option: o, votes: o === choices[i] ? 1 : 0 })),
      );
      expect(r.poll.votes.map((v) => v.contact.phone)).to.deep.equal([c]);
    }
    // Over the list: Pizza 2, Sushi 1, Tacos 0.
    const tallies = await Promise.all(
      ids.map(async (id) => (await record<{ poll: PollRecord }>(id)).poll.tally),
    );
    expect(poll.options.map((o, k) => tallies.reduce((n, t) => n + t[k]!.votes, 0))).to.deep.equal([2, 1, 0]);

    // The third contact changes its mind: its latest vote counts.
    await contactSends(contacts[2]!, { pollVote: { pollId: polls[2]!.id, options: ['Tacos'] } });
    await waitFor(async () => receiver.events('poll.vote', (d) => d.messageId === ids[2]).length === 2, {
      what: 'the second poll.vote',
    });
    const changed = await record<{ poll: PollRecord }>(ids[2]!);
    expect(changed.poll.tally.map((t) => t.votes)).to.deep.equal([0, 0, 1]);
  });

  it('When a multiple-choice poll gets a vote for two options, then both count; on a single-choice poll such a vote is refused', async () => {
    const contact = '15550910008';
    const { messageId } = await send({
      to: contact,
      poll: { question: 'Which days?', options: ['Mon', 'Tue', 'Wed'], multiple: true },
    });
    const r = await sent(messageId);
    const p = await arrived(contact, String(r.platformMessageId));
    expect(p).to.include({ type: 'poll', selectableCount: 0 });
    await contactSends(contact, { pollVote: { pollId: p.id, options: ['Mon', 'Wed'] } });
    const vote = await event('poll.vote', (d) => d.messageId === messageId, 'poll.vote');
    expect(vote.options).to.deep.equal(['Mon', 'Wed']);
    expect(vote.tally).to.deep.equal([
      { option: 'Mon', votes: 1 },
      { option: 'Tue', votes: 0 },
      { option: 'Wed', votes: 1 },
    ]);
    expect((await record<{ poll: PollRecord }>(messageId)).poll.tally).to.deep.equal(vote.tally);

    // Two options on a single-choice poll is no vote a WhatsApp app makes: counted invalid, not tallied.
    const single = await send({ to: contact, poll: { question: 'One day?', options: ['Mon', 'Tue'] } });
    const sr = await sent(single.messageId);
    const sp = await arrived(contact, String(sr.platformMessageId));
    await contactSends(contact, { pollVote: { pollId: sp.id, options: ['Mon', 'Tue'] } });
    const invalid = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack().senders()[0]!.port}/metrics`)).text();
      return /^mgw_inbound_kinds_total\{kind="poll_vote",outcome="invalid"\} (\d+)/m.exec(text)?.[1];
    };
    await waitFor(async () => (await invalid()) === '1', { what: 'the invalid vote counted' });
    const untouched = await record<{ poll: PollRecord }>(single.messageId);
    expect(untouched.poll.tally.map((t) => t.votes)).to.deep.equal([0, 0]);
    expect(receiver.events('poll.vote', (d) => d.messageId === single.messageId)).to.have.length(0);
  });

  it('When a contact reacts to our message, shares a location and a contact card, then message.reaction and message.received carry them and the records show them', async () => {
    const contact = '15550910009';
    const { messageId } = await send({ to: contact, text: 'how was it?' });
    const ours = await sent(messageId);
    await arrived(contact, String(ours.platformMessageId));

    const reacted = await contactSends(contact, {
      reaction: { messageId: ours.platformMessageId, emoji: '🎉' },
    });
    const reaction = await event(
      'message.reaction',
      (d) => d.platformMessageId === reacted.id,
      'message.reaction',
    );
    expect(reaction).to.deep.include({
      messageId,
      targetPlatformMessageId: ours.platformMessageId,
      contact: { phone: contact },
      emoji: '🎉',
    });
    const withReaction = await record<{ reactions: { contact: Json; emoji: string }[] }>(messageId);
    expect(withReaction.reactions.map((r) => [r.contact, r.emoji])).to.deep.equal([
      [{ phone: contact }, '🎉'],
    ]);

    const location = {
      latitude: 48.8584,
      longitude: 2.2945,
      name: 'Eiffel Tower',
      address: 'Champ de Mars, Paris',
    };
    const shared = await contactSends(contact, { location });
    const got = await event(
      'message.received',
      (d) => d.platformMessageId === shared.id,
      'location received',
    );
    expect(got.location).to.deep.equal(location);
    expect(got).to.not.have.property('text');
    expect((await record(String(got.messageId))).location).to.deep.equal(location);

    const card = await contactSends(contact, {
      contacts: [{ name: 'Bob Builder', phones: ['15550910077'] }],
    });
    const cardEvent = await event(
      'message.received',
      (d) => d.platformMessageId === card.id,
      'contact card received',
    );
    expect(cardEvent.contacts).to.deep.equal([{ name: 'Bob Builder', phones: ['15550910077'] }]);
    expect((await record(String(cardEvent.messageId))).contacts).to.deep.equal(cardEvent.contacts);

    // Removing the reaction takes it off the record.
    const undo = await contactSends(contact, { reaction: { messageId: ours.platformMessageId, emoji: '' } });
    await event(
      'message.reaction',
      (d) => d.platformMessageId === undo.id && d.emoji === '',
      'reaction removed',
    );
    expect(await record(messageId)).to.not.have.property('reactions');
  });
});
