import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import { statusViewsInUpserts, statusViewsOf } from '../../src/status-updates.js';

const ours = (userReceipt: WAMessage['userReceipt'], remoteJid = 'status@broadcast'): WAMessage => ({
  key: { remoteJid, fromMe: true, id: '3EB0STATUS' },
  message: { extendedTextMessage: { text: 'Open until 20:00 today' } },
  messageTimestamp: 1_795_633_093,
  userReceipt,
});

describe('status views (statusViewsOf, statusViewsInUpserts)', () => {
  it('When Baileys reports views as receipt updates, then each read or played one is a view of that status, with the viewer by phone or LID', () => {
    const views = statusViewsOf([
      {
        key: { remoteJid: 'status@broadcast', fromMe: true, id: '3EB0STATUS' },
        receipt: { userJid: '15552700011@s.whatsapp.net', readTimestamp: 1_795_633_093 },
      },
      {
        key: { remoteJid: 'status@broadcast', fromMe: true, id: '3EB0STATUS' },
        receipt: { userJid: '98765@lid', playedTimestamp: 1_795_633_094 },
      },
      // delivered only: not a view
      {
        key: { remoteJid: 'status@broadcast', fromMe: true, id: '3EB0STATUS' },
        receipt: { userJid: '15552700013@s.whatsapp.net', receiptTimestamp: 1_795_633_093 },
      },
      // a group's read receipt: not a status
      {
        key: { remoteJid: '120363000000000001@g.us', fromMe: true, id: '3EB0GROUP' },
        receipt: { userJid: '15552700011@s.whatsapp.net', readTimestamp: 1_795_633_093 },
      },
    ]);
    expect(views).to.deep.equal([
      {
        platformMessageId: '3EB0STATUS',
        viewerJid: '15552700011@s.whatsapp.net',
        viewer: { phone: '15552700011' },
        at: new Date(1_795_633_093_000),
      },
      {
        platformMessageId: '3EB0STATUS',
        viewerJid: '98765@lid',
        viewer: { lid: '98765@lid' },
        at: new Date(1_795_633_094_000),
      },
    ]);
  });

  it('When views arrive while Baileys still buffers the upsert of the status just posted (folded into its userReceipt), then they are views all the same; other upserts give none', () => {
    const folded = ours([
      { userJid: '15552700011@s.whatsapp.net', readTimestamp: 1_795_633_093 },
      { userJid: '15552700012@s.whatsapp.net', readTimestamp: 1_795_633_093 },
    ]);
    const views = statusViewsInUpserts([
      folded,
      ours(undefined),
      ours([{ userJid: '15552700011@s.whatsapp.net', readTimestamp: 1 }], '15552700011@s.whatsapp.net'),
      { ...folded, key: { ...folded.key, fromMe: false } },
    ]);
    expect(views.map((v) => [v.platformMessageId, v.viewer.phone])).to.deep.equal([
      ['3EB0STATUS', '15552700011'],
      ['3EB0STATUS', '15552700012'],
    ]);
  });
});
