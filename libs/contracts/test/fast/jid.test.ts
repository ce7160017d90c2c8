import { expect } from 'chai';
import {
  isGroupAddress,
  isLidAddress,
  isNewsletterAddress,
  isPersonAddress,
  isPhoneAddress,
  isServerAddress,
  isStatusAddress,
  parseJid,
  phoneOfJid,
  sameJid,
  sameUser,
  toUserJid,
  userOfJid,
} from '../../src/index.js';

describe('contracts: JIDs parsed, in every spelling the protocol allows (jid.ts)', () => {
  it("When the server's address comes with or without its @, or as the legacy c.us, then it is the server; a user's JID is not", () => {
    for (const server of ['@s.whatsapp.net', 's.whatsapp.net', '@c.us', 'c.us'])
      expect(isServerAddress(server), server).to.equal(true);
    for (const other of [
      '15550001111@s.whatsapp.net',
      'g.us',
      '@g.us',
      'lid',
      '',
      's.whatsapp.net@lid',
      undefined,
      7,
    ])
      expect(isServerAddress(other), String(other)).to.equal(false);
  });

  it('When a JID names a device or an agent (whatsmeow’s user.agent:device, Baileys’ user_agent:device), then its user, server, agent and device are read apart', () => {
    expect(parseJid('15550001111:12@s.whatsapp.net')).to.deep.equal({
      user: '15550001111',
      server: 's.whatsapp.net',
      agent: 0,
      device: 12,
    });
    expect(parseJid('998877.1:3@lid')).to.deep.equal({ user: '998877', server: 'lid', agent: 1, device: 3 });
    expect(parseJid('998877_1:3@lid')).to.deep.equal({ user: '998877', server: 'lid', agent: 1, device: 3 });
    expect(parseJid('15550001111@c.us')).to.deep.include({ server: 's.whatsapp.net' });
    for (const bad of ['a@b@c', '1:x@lid', '1@', '1@S.WHATSAPP.NET', '1.a@lid'])
      expect(parseJid(bad), bad).to.equal(undefined);
  });

  it('When addresses are compared, then spellings and devices do not matter and servers do: c.us is s.whatsapp.net, a LID is not a phone', () => {
    expect(sameUser('15550001111:3@s.whatsapp.net', '15550001111@c.us')).to.equal(true);
    expect(sameUser('15550001111@s.whatsapp.net', '15550001111@lid')).to.equal(false);
    expect(sameUser('@s.whatsapp.net', 's.whatsapp.net')).to.equal(false); // no user to be the same
    expect(sameJid('@s.whatsapp.net', 's.whatsapp.net')).to.equal(true);
    expect(sameJid('1:2@lid', '1.0:2@lid')).to.equal(true);
    expect(sameJid('1:2@lid', '1@lid')).to.equal(false);
    expect(toUserJid('15550001111:7@c.us')).to.equal('15550001111@s.whatsapp.net');
    expect(toUserJid('s.whatsapp.net')).to.equal(undefined);
    expect(userOfJid('120363000000000001@g.us')).to.equal('120363000000000001');
    expect(phoneOfJid('15550001111:2@s.whatsapp.net')).to.equal('15550001111');
    expect(phoneOfJid('998877@lid')).to.equal(undefined);
  });

  it('When a JID is classified, then each kind is told by its parsed server, any device', () => {
    expect(isPhoneAddress('15550001111:1@s.whatsapp.net')).to.equal(true);
    expect(isPhoneAddress('15550001111@c.us')).to.equal(true);
    expect(isLidAddress('998877:4@lid')).to.equal(true);
    expect(isPersonAddress('120363000000000001@g.us')).to.equal(false);
    expect(isGroupAddress('120363000000000001@g.us')).to.equal(true);
    expect(isGroupAddress('g.us')).to.equal(false);
    expect(isNewsletterAddress('120363000000000002@newsletter')).to.equal(true);
    expect(isStatusAddress('status@broadcast')).to.equal(true);
    expect(isStatusAddress('12345@broadcast')).to.equal(false);
  });
});
