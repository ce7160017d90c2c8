import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import { contactOf, identityOfJids, parseInbound } from '../../src/inbound-message.js';

const text = (key: WAMessage['key']): WAMessage => ({
  key: { id: '3EB0AA', fromMe: false, ...key },
  message: { conversation: 'hi' },
  messageTimestamp: 1_700_000_000,
});

describe('messenger: who wrote an inbound message (phone and LID)', () => {
  it('When the chat is addressed by phone, by LID with sender_pn, or by LID alone, then the message is kept with the identity it tells', () => {
    const byPhone = parseInbound(text({ remoteJid: '15551230001@s.whatsapp.net' }))!;
    expect(byPhone).to.include({ from: '15551230001', text: 'hi' });
    expect(byPhone.contact).to.deep.equal({ phone: '15551230001' });

    const lidWithPn = parseInbound(
      text({ remoteJid: '111222333444555@lid', remoteJidAlt: '15551230002@s.whatsapp.net' }),
    )!;
    expect(lidWithPn.from).to.equal('15551230002');
    expect(lidWithPn.contact).to.deep.equal({ phone: '15551230002', lid: '111222333444555@lid' });

    // A contact that hides its number: no phone anywhere, kept all the same.
    const lidOnly = parseInbound(text({ remoteJid: '999888777666555@lid' }))!;
    expect(lidOnly).to.not.have.property('from');
    expect(lidOnly.contact).to.deep.equal({ lid: '999888777666555@lid' });
    expect(lidOnly.text).to.equal('hi');
  });

  it('When the chat is a group, a broadcast or our own message, then it is not a one-to-one message kept here', () => {
    expect(contactOf({ remoteJid: '1203630@g.us', participant: '15551230001@s.whatsapp.net' })).to.deep.equal(
      {},
    );
    // A group message's author, by its participant JIDs (with a device part, as Baileys gives them).
    expect(identityOfJids('111222333444555:2@lid', '15551230001:2@s.whatsapp.net')).to.deep.equal({
      phone: '15551230001',
      lid: '111222333444555@lid',
    });
    expect(parseInbound(text({ remoteJid: '1203630@g.us' }))).to.equal(undefined);
    expect(parseInbound(text({ remoteJid: 'status@broadcast' }))).to.equal(undefined);
    // A contact's status names its author (participant, and an alternative JID when Baileys knows
    // one): it is a status update (status-updates.ts), never a message of a chat.
    const status = {
      remoteJid: 'status@broadcast',
      remoteJidAlt: '15551230001@s.whatsapp.net',
      participant: '15551230001@s.whatsapp.net',
    };
    expect(parseInbound(text(status))).to.equal(undefined);
    expect(parseInbound(text({ ...status, remoteJid: '1700000000@broadcast' }))).to.equal(undefined);
    expect(parseInbound(text({ remoteJid: '15551230001@s.whatsapp.net', fromMe: true }))).to.equal(undefined);
  });

  it('When a text mentions people, then the message keeps them as phones or LIDs, without duplicates or other JIDs', () => {
    const msg = parseInbound({
      key: { id: '3EB0MM', fromMe: false, remoteJid: '15551230001@s.whatsapp.net' },
      message: {
        extendedTextMessage: {
          text: 'hi @a @b',
          contextInfo: {
            mentionedJid: [
              '15551230002@s.whatsapp.net',
              '111222333444555@lid',
              '15551230002@s.whatsapp.net',
              '120363000000000001@g.us',
            ],
          },
        },
      },
      messageTimestamp: 1_700_000_000,
    })!;
    expect(msg.mentions).to.deep.equal(['15551230002', '111222333444555@lid']);
    expect(parseInbound(text({ remoteJid: '15551230001@s.whatsapp.net' }))!).to.not.have.property('mentions');
  });
});
