import { expect } from 'chai';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { parseRevision } from '../../src/inbound-revision.js';

const revoke = (key: WAMessage['key']): WAMessage => ({
  key: { id: '3EB0REV', fromMe: false, ...key },
  message: {
    protocolMessage: {
      key: { id: '3EB0TARGET', fromMe: true },
      type: proto.Message.ProtocolMessage.Type.REVOKE,
    },
  },
  messageTimestamp: 1_700_000_000,
});
const edit = (key: WAMessage['key']): WAMessage => ({
  key: { id: '3EB0EDIT', fromMe: false, ...key },
  message: {
    protocolMessage: {
      key: { id: '3EB0TARGET', fromMe: true },
      type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
      editedMessage: { conversation: 'fixed' },
    },
  },
  messageTimestamp: 1_700_000_000,
});

describe('messenger: who edited or deleted a message (phone, LID, group member)', () => {
  it('When a revision comes from a phone chat, a LID chat with or without its number, or a group member, then it names the contact as an inbound message would', () => {
    expect(parseRevision(revoke({ remoteJid: '15551230001@s.whatsapp.net' }))).to.deep.include({
      from: '15551230001',
      contact: { phone: '15551230001' },
      targetPlatformMessageId: '3EB0TARGET',
    });
    const lidOnly = parseRevision(edit({ remoteJid: '999888777666555@lid' }))!;
    expect(lidOnly).to.not.have.property('from');
    expect(lidOnly).to.deep.include({ contact: { lid: '999888777666555@lid' }, text: 'fixed' });
    expect(
      parseRevision(revoke({ remoteJid: '111222333444555@lid', remoteJidAlt: '15551230002@s.whatsapp.net' }))!
        .contact,
    ).to.deep.equal({ phone: '15551230002', lid: '111222333444555@lid' });
    const member = parseRevision(
      edit({
        remoteJid: '120363000000000001@g.us',
        participant: '111222333444556@lid',
        participantAlt: '15551230003@s.whatsapp.net',
      }),
    )!;
    expect(member).to.deep.include({ from: '15551230003', text: 'fixed' });
    expect(member.contact).to.deep.equal({ phone: '15551230003', lid: '111222333444556@lid' });
  });

  it('When the message is ours, names nobody, or is no edit or revoke, then it is no revision', () => {
    expect(parseRevision(revoke({ remoteJid: '15551230001@s.whatsapp.net', fromMe: true }))).to.equal(
      undefined,
    );
    expect(
      parseRevision(revoke({ remoteJid: '120363000000000001@g.us' })),
      'a group message without author',
    ).to.equal(undefined);
    expect(parseRevision(revoke({ remoteJid: 'status@broadcast' }))).to.equal(undefined);
    expect(
      parseRevision({
        key: { id: 'X', remoteJid: '15551230001@s.whatsapp.net' },
        message: { conversation: 'hi' },
      }),
    ).to.equal(undefined);
  });
});
