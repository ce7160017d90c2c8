import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { proto, type BinaryNode } from '@whiskeysockets/baileys';
import {
  answerOf,
  answersByNumber,
  csToken,
  historySyncNctSalt,
  isDirectChat,
  nctSaltChangeOf,
  parseNumberAnswers,
} from '../../src/index.js';

/** A length-delimited protobuf field, raw (what Baileys' protos cannot write for fields they lack). */
const bytesField = (field: number, bytes: Uint8Array): Buffer => {
  const varint = (n: number) => {
    const out: number[] = [];
    for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80);
    out.push(n);
    return Buffer.from(out);
  };
  return Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);
};

/**
 * What the gateway reads of WhatsApp's 2026 first-contact protocol itself, since Baileys rc14 does
 * not: the NCT salt in a history sync (field 19) and in an app-state `nct_salt_sync` mutation
 * (SyncActionValue field 80), the cstoken, and a number lookup's answer by LID (whatsmeow 82d579d5,
 * 6e4c3416, d8960d95).
 */
describe('messenger: first-contact protocol parsing (NCT salt, cstoken, LID number lookups)', () => {
  const salt = Buffer.from('a6f0c3d1e2b4a5968778695a4b3c2d1e0f1e2d3c4b5a69788796a5b4c3d2e1f0', 'hex');

  it('When a history sync carries field 19 (after or among its other fields), then its salt is read; without it, or from bytes that are not protobuf, none', () => {
    const encoded = proto.HistorySync.encode({
      syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
      conversations: [{ id: '15550001111@s.whatsapp.net', messages: [] }],
      chunkOrder: 1,
      progress: 100,
    }).finish();
    expect(historySyncNctSalt(Buffer.concat([encoded, bytesField(19, salt)]))).to.deep.equal(salt);
    expect(historySyncNctSalt(Buffer.concat([bytesField(19, salt), encoded]))).to.deep.equal(salt);
    expect(historySyncNctSalt(encoded)).to.equal(undefined);
    expect(historySyncNctSalt(Buffer.from('not a protobuf at all, just text'))).to.equal(undefined);
    expect(historySyncNctSalt(Buffer.concat([encoded, bytesField(19, Buffer.alloc(0))]))).to.equal(undefined);
  });

  it('When an app-state nct_salt_sync mutation is a SET with field 80, then its salt is the new one; a REMOVE forgets; a SET without a salt says nothing', () => {
    const data = (value: Uint8Array) =>
      Buffer.concat([
        bytesField(1, Buffer.from('["nct_salt_sync"]')),
        bytesField(2, value),
        bytesField(3, Buffer.alloc(0)),
      ]);
    const withSalt = Buffer.concat([
      proto.SyncActionValue.encode({ timestamp: 1_790_000_000_000 }).finish(),
      bytesField(80, bytesField(1, salt)),
    ]);
    expect(nctSaltChangeOf({ operation: 0, syncActionData: data(withSalt) })).to.deep.equal({ salt });
    expect(nctSaltChangeOf({ operation: 1, syncActionData: data(withSalt) })).to.deep.equal({
      removed: true,
    });
    const bare = proto.SyncActionValue.encode({ timestamp: 1 }).finish();
    expect(nctSaltChangeOf({ operation: 0, syncActionData: data(bare) })).to.equal(undefined);
  });

  it('When a cstoken is made, then it is HMAC-SHA256 of the salt over "<digits>@lid"; only one-to-one chats with people get one', () => {
    const lid = '112893567721673@lid';
    expect(csToken(salt, lid)).to.deep.equal(createHmac('sha256', salt).update(lid).digest());
    expect(isDirectChat('15550001111@s.whatsapp.net')).to.equal(true);
    expect(isDirectChat(lid)).to.equal(true);
    for (const jid of ['120363019000000001@g.us', 'status@broadcast', '0@s.whatsapp.net', '1234@newsletter'])
      expect(isDirectChat(jid), jid).to.equal(false);
  });

  it('When a lookup is answered by LID, then each number gets its phone JID and LID by the number it echoes; one not on WhatsApp (pn_jid alone) is out; a rewritten number is matched by its echo', () => {
    const user = (attrs: Record<string, string>, type: string, asked: string): BinaryNode => ({
      tag: 'user',
      attrs,
      content: [{ tag: 'contact', attrs: { type }, content: Buffer.from(`+${asked}@c.us`) }],
    });
    const result: BinaryNode = {
      tag: 'iq',
      attrs: { type: 'result' },
      content: [
        {
          tag: 'usync',
          attrs: {},
          content: [
            {
              tag: 'list',
              attrs: {},
              content: [
                user({ jid: '901@lid', pn_jid: '15550003333@s.whatsapp.net' }, 'in', '15550003333'),
                user({ pn_jid: '15550004444@s.whatsapp.net' }, 'out', '15550004444'),
                user({ jid: '902@lid', pn_jid: '5511987654321@s.whatsapp.net' }, 'in', '551187654321'),
              ],
            },
          ],
        },
      ],
    };
    const list = parseNumberAnswers(result)!;
    expect(list).to.deep.equal([
      {
        id: '901@lid',
        contact: true,
        lid: '901@lid',
        pnJid: '15550003333@s.whatsapp.net',
        query: '15550003333',
      },
      {
        id: '15550004444@s.whatsapp.net',
        contact: false,
        pnJid: '15550004444@s.whatsapp.net',
        query: '15550004444',
      },
      {
        id: '902@lid',
        contact: true,
        lid: '902@lid',
        pnJid: '5511987654321@s.whatsapp.net',
        query: '551187654321',
      },
    ]);
    const byNumber = answersByNumber(list);
    const answers = ['15550003333', '15550004444', '551187654321'].map((p) => answerOf(byNumber.get(p), p));
    expect(answers).to.deep.equal([
      { onWhatsApp: true, jid: '15550003333@s.whatsapp.net', lid: '901@lid' },
      { onWhatsApp: false },
      { onWhatsApp: true, jid: '5511987654321@s.whatsapp.net', lid: '902@lid' },
    ]);
    expect(parseNumberAnswers({ tag: 'iq', attrs: { type: 'error' } })).to.equal(undefined);
  });
});
