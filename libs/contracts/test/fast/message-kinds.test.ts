import { expect } from 'chai';
import { buildVCard, escapeVCardText, isReactionEmoji, parseVCard } from '@mgw/contracts';

describe('message kinds: vCards and reaction emoji', () => {
  it('When a card has vCard special characters or tries to add a line, then its vCard escapes them and reads back to the same fields', () => {
    const card = {
      name: 'Doe, Jane; \\ Jr\nTEL:+19999999999',
      phones: ['15551234567'],
      email: 'a;b@example.com',
      organization: 'ACME;Sales\r\nEND:VCARD',
    };
    const vcard = buildVCard(card);
    const lines = vcard.split('\n');
    expect(lines).to.deep.equal([
      'BEGIN:VCARD',
      'VERSION:3.0',
      'FN:Doe\\, Jane\\; \\\\ Jr\\nTEL:+19999999999',
      'TEL;type=CELL;type=VOICE;waid=15551234567:+15551234567',
      'EMAIL;type=INTERNET:a\\;b@example.com',
      'ORG:ACME\\;Sales\\nEND:VCARD',
      'END:VCARD',
    ]);
    expect(parseVCard(vcard)).to.deep.equal({ ...card, organization: 'ACME;Sales\nEND:VCARD' });
    expect(escapeVCardText('a\u0000b\u0007')).to.equal('ab');
  });

  it("When a phone's vCard is read, then FN (or N), each TEL (waid first), EMAIL and ORG come out, bounded, and a card of nothing is undefined", () => {
    const phone = [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'N:Lima;Ana;;;',
      'item1.TEL;waid=5511987654321:+55 11 98765-4321',
      'TEL;type=HOME:+1 (555) 000-1111',
      'ORG:Big Co;Unit',
      'END:VCARD',
    ].join('\r\n');
    expect(parseVCard(phone)).to.deep.equal({
      name: 'Ana Lima',
      phones: ['5511987654321', '15550001111'],
      organization: 'Big Co',
    });
    expect(parseVCard('BEGIN:VCARD\nEND:VCARD')).to.equal(undefined);
    const many = ['BEGIN:VCARD', 'FN:x', ...Array.from({ length: 100 }, (_, i) => `TEL:+1555000${i}`)].join(
      '\n',
    );
    expect(parseVCard(many)!.phones).to.have.length(20);
    expect(parseVCard(`FN:${'y'.repeat(100_000)}`)!.name).to.have.length(512);
  });

  it('When an emoji is judged, then one grapheme with an emoji (skin tone, flag, ZWJ family, keycap) or "" passes, anything else does not', () => {
    for (const ok of ['👍', '👍🏽', '🇧🇷', '👨‍👩‍👧‍👦', '1️⃣', '❤️', ''])
      expect(isReactionEmoji(ok), JSON.stringify(ok)).to.equal(true);
    for (const bad of ['a', 'ok', '👍👍', '👍 ', ' ', '1', '\u200d', '😀'.repeat(20)])
      expect(isReactionEmoji(bad), JSON.stringify(bad)).to.equal(false);
  });
});
