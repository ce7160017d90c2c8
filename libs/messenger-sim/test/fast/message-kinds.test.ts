import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { decryptPollVote } from '@whiskeysockets/baileys';
import { startTestSimulator } from '@mgw/testing';
import type { SimulatorHandle } from '../../src/index.js';
import { describeKind, encryptPollVote } from '../../src/message-kinds.js';

describe('messenger-sim: message kinds', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  before(async () => {
    sim = await startTestSimulator();
  });
  after(async () => {
    await sim.close();
  });

  it("When a vote is encrypted as a phone does, then the client's decryptPollVote opens it to the options' SHA-256 (and not under another voter)", () => {
    const secret = randomBytes(32);
    const creator = '15550004001@s.whatsapp.net';
    const voter = '15550004002@s.whatsapp.net';
    const vote = encryptPollVote(secret, '3EB0POLL', creator, voter, ['Pizza', 'Tacos']);
    const opened = decryptPollVote(vote, {
      pollCreatorJid: creator,
      pollMsgId: '3EB0POLL',
      pollEncKey: secret,
      voterJid: voter,
    });
    const hex = (o: string) => createHash('sha256').update(o).digest('hex');
    expect(opened.selectedOptions.map((o) => Buffer.from(o).toString('hex'))).to.deep.equal([
      hex('Pizza'),
      hex('Tacos'),
    ]);
    expect(() =>
      decryptPollVote(vote, {
        pollCreatorJid: creator,
        pollMsgId: '3EB0POLL',
        pollEncKey: secret,
        voterJid: '1@s.whatsapp.net',
      }),
    ).to.throw();
  });

  it('When the account sends a kind, then the inbox decodes it (single-choice poll V3, several cards)', () => {
    expect(
      describeKind({
        pollCreationMessageV3: {
          name: 'Q?',
          options: [{ optionName: 'a' }, { optionName: 'b' }],
          selectableOptionsCount: 1,
        },
      }),
    ).to.deep.equal({ type: 'poll', question: 'Q?', options: ['a', 'b'], selectableCount: 1 });
    expect(
      describeKind({
        contactsArrayMessage: { displayName: '2 contacts', contacts: [{ vcard: 'A' }, { vcard: 'B' }] },
      }),
    ).to.deep.equal({ type: 'contacts', displayName: '2 contacts', vcards: ['A', 'B'] });
    expect(describeKind({ conversation: 'hi' })).to.equal(undefined);
  });

  it('When a contact is asked to send a malformed kind, then the control API answers 400 and sends nothing', async () => {
    const send = async (body: Record<string, unknown>) => {
      const res = await fetch(`${sim.controlUrl}/contacts/15550004002/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to: '15550004001', ...body }),
      });
      return { status: res.status, error: ((await res.json()) as { error: string }).error };
    };
    for (const body of [
      { reaction: { messageId: 'x', emoji: '👍' }, location: { latitude: 1, longitude: 2 } },
      { reaction: { messageId: 'x' } },
      { location: { latitude: 'north', longitude: 2 } },
      { contacts: [] },
      { pollVote: { pollId: 'x' } },
      { text: 'and', location: { latitude: 1, longitude: 2 } },
    ]) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.error).to.be.a('string');
    }
  });
});
