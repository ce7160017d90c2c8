import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import { kindReceivedAt } from '../../src/inbound-kinds.js';
import { parseInbound } from '../../src/inbound-message.js';
import { pollOptionHash } from '../../src/message-kinds.js';

const from = (message: WAMessage['message'], id = '3EB0KIND'): WAMessage => ({
  key: { remoteJid: '15550005001@s.whatsapp.net', remoteJidAlt: '98765@lid', fromMe: false, id },
  message,
  messageTimestamp: 1_700_000_000,
});

describe('inbound message kinds (parseInbound)', () => {
  it('When a contact shares a location, contact cards, a reaction or a poll vote, then each is read with the contact (phone and LID)', () => {
    const location = parseInbound(
      from({ locationMessage: { degreesLatitude: 1.5, degreesLongitude: -2.5, name: 'Here' } }),
    );
    expect(location).to.deep.include({
      from: '15550005001',
      contact: { phone: '15550005001', lid: '98765@lid' },
      location: { latitude: 1.5, longitude: -2.5, name: 'Here' },
    });
    expect(location).to.not.have.property('text');
    const cards = parseInbound(
      from({
        contactsArrayMessage: {
          contacts: [
            {
              displayName: 'Ana',
              vcard: 'BEGIN:VCARD\nFN:Ana\nTEL;waid=15550000001:+1 555 000 0001\nEND:VCARD',
            },
            { displayName: 'Only a name', vcard: 'BEGIN:VCARD\nTEL:+15550000002\nEND:VCARD' },
          ],
        },
      }),
    );
    expect(cards?.contacts).to.deep.equal([
      { name: 'Ana', phones: ['15550000001'] },
      { name: 'Only a name', phones: ['15550000002'] },
    ]);
    const reaction = parseInbound(from({ reactionMessage: { key: { id: '3EB0OURS' }, text: '🎉' } }));
    expect(reaction?.reaction).to.deep.equal({ targetPlatformMessageId: '3EB0OURS', emoji: '🎉' });
    const vote = parseInbound(
      from({
        pollUpdateMessage: {
          pollCreationMessageKey: { id: '3EB0POLL' },
          vote: { encPayload: new Uint8Array([1, 2]), encIv: new Uint8Array([3]) },
        },
      }),
    );
    expect(vote?.pollVote).to.deep.include({
      pollPlatformMessageId: '3EB0POLL',
      voterJids: ['15550005001@s.whatsapp.net', '98765@lid'],
    });
    expect(pollOptionHash('Pizza')).to.match(/^[0-9a-f]{64}$/);
  });

  it('When a kind is hostile (a point out of range, oversized strings, many cards, a long "emoji"), then it is dropped or bounded', () => {
    expect(parseInbound(from({ locationMessage: { degreesLatitude: 91, degreesLongitude: 0 } }))).to.equal(
      undefined,
    );
    expect(
      parseInbound(from({ locationMessage: { degreesLatitude: Number.NaN, degreesLongitude: 0 } })),
    ).to.equal(undefined);
    const long = parseInbound(
      from({
        locationMessage: {
          degreesLatitude: 0,
          degreesLongitude: 0,
          name: 'n'.repeat(5000),
          address: 'a'.repeat(5000),
        },
      }),
    );
    expect(long?.location?.name).to.have.length(256);
    expect(long?.location?.address).to.have.length(512);
    const many = parseInbound(
      from({
        contactsArrayMessage: {
          contacts: Array.from({ length: 50 }, (_, i) => ({ vcard: `BEGIN:VCARD\nFN:c${i}\nEND:VCARD` })),
        },
      }),
    );
    expect(many?.contacts).to.have.length(10);
    const emoji = parseInbound(from({ reactionMessage: { key: { id: 'x' }, text: '😀'.repeat(100) } }));
    expect(emoji?.reaction?.emoji).to.have.length(32);
  });
});

describe('inbound receive time (kindReceivedAt)', () => {
  const at = (messageTimestamp: number): WAMessage => ({
    key: { remoteJid: '15550005001@s.whatsapp.net', fromMe: false, id: '3EB0TIME' },
    message: { conversation: 'hi' },
    messageTimestamp,
  });

  it('When a message arrives within the second WhatsApp stamped, then it takes the arrival milliseconds (it sorts after what was sent earlier that second)', () => {
    expect(kindReceivedAt(at(1_700_000_000), 1_700_000_000_734).getTime()).to.equal(1_700_000_000_734);
  });

  it("When a message arrives later than its second (offline delivery, a slow link, history), then it takes that second's last millisecond; before its second, the stamp; with no stamp, the arrival", () => {
    expect(kindReceivedAt(at(1_700_000_000), 1_700_000_005_000).getTime()).to.equal(1_700_000_000_999);
    expect(kindReceivedAt(at(1_700_000_000), 1_699_999_999_000).getTime()).to.equal(1_700_000_000_000);
    expect(kindReceivedAt(at(0), 1_700_000_000_123).getTime()).to.equal(1_700_000_000_123);
  });

  it("When two contacts write in the same second and the second message arrives after that second, then it still sorts after the first (the chat list's order)", () => {
    const first = kindReceivedAt(at(1_700_000_000), 1_700_000_000_300);
    const second = kindReceivedAt(at(1_700_000_000), 1_700_000_001_100);
    expect(second.getTime()).to.be.above(first.getTime());
  });
});
