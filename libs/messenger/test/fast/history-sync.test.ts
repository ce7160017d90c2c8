import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { expect } from 'chai';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { encryptLikePhone } from '@mgw/messenger-sim';
import {
  historyChunkOf,
  historyNoticesOf,
  HistoryTooLargeError,
  MediaDecryptError,
  readHistory,
  readHistorySalt,
} from '../../src/index.js';

const text = (
  id: string,
  remoteJid: string,
  fromMe: boolean,
  at: number,
  body: string,
  participant?: string,
) => ({
  message: {
    key: { remoteJid, fromMe, id, ...(participant ? { participant } : {}) },
    message: { conversation: body },
    messageTimestamp: at,
  },
});

const SYNC: proto.IHistorySync = {
  syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
  chunkOrder: 1,
  progress: 100,
  conversations: [
    {
      id: '15552800011@s.whatsapp.net',
      lidJid: '2800011@lid',
      messages: [
        text('A3', '15552800011@s.whatsapp.net', false, 1_700_000_300, 'third'),
        text('A2', '15552800011@s.whatsapp.net', true, 1_700_000_200, 'second'),
        text('A1', '15552800011@s.whatsapp.net', false, 1_700_000_100, 'first'),
        // A reaction acts on another message: not a message of the history.
        {
          message: {
            key: { remoteJid: '15552800011@s.whatsapp.net', fromMe: false, id: 'R1' },
            message: { reactionMessage: { key: { id: 'A2', fromMe: true }, text: '👍' } },
            messageTimestamp: 1_700_000_250,
          },
        },
      ],
    },
    {
      id: '120363028000000001@g.us',
      name: 'Team',
      messages: [
        text('G2', '120363028000000001@g.us', true, 1_700_000_500, 'mine'),
        text('G1', '120363028000000001@g.us', false, 1_700_000_400, 'theirs', '15552800012@s.whatsapp.net'),
      ],
    },
  ],
};

async function notice(plain: Buffer, announced = plain.length) {
  // What the phone uploads: the deflated history, encrypted like media with the history keys.
  const { body, mediaKey } = await encryptLikePhone(plain, 'md-msg-hist');
  return {
    body,
    notice: {
      id: 'N1',
      notification: {
        directPath: '/v/t62.history/abc.enc',
        mediaKey,
        fileLength: announced,
        fileSha256: createHash('sha256').update(plain).digest(),
      },
    },
  };
}

describe('history sync (historyChunkOf, readHistory, historyNoticesOf)', () => {
  it('When a chunk is read, then its texts come oldest first in both directions, a group’s with its subject, reactions left out, and the chats’ phone <-> LID pairs named', () => {
    const chunk = historyChunkOf(SYNC, 100);
    expect(chunk).to.include({
      syncType: 'INITIAL_BOOTSTRAP',
      chunkOrder: 1,
      progress: 100,
      conversations: 2,
      skipped: 0,
    });
    expect(chunk.messages.map((m) => [m.platformMessageId, m.direction, m.text])).to.deep.equal([
      ['A1', 'inbound', 'first'],
      ['A2', 'outbound', 'second'],
      ['A3', 'inbound', 'third'],
      ['G1', 'inbound', 'theirs'],
      ['G2', 'outbound', 'mine'],
    ]);
    const [, a2, , g1, g2] = chunk.messages;
    expect(a2!.contact).to.deep.equal({ phone: '15552800011' });
    expect(g1!.contact).to.deep.equal({ phone: '15552800012' });
    expect(g1!.chat).to.deep.equal({ type: 'group', id: '120363028000000001@g.us', subject: 'Team' });
    expect(g2!.contact).to.deep.equal({});
    expect(chunk.identities).to.deep.equal([{ phone: '15552800011', lid: '2800011@lid' }]);
  });

  it('When a chunk holds an attachment, then it is described and keeps its message (the media reference a download needs), in both directions', () => {
    const image = (id: string, fromMe: boolean) => ({
      message: {
        key: { remoteJid: '15552800011@s.whatsapp.net', fromMe, id },
        message: {
          imageMessage: {
            url: 'https://mmg.whatsapp.net/v/t62.7118-24/abc.enc',
            directPath: '/v/t62.7118-24/abc.enc',
            mediaKey: Buffer.alloc(32, 7),
            mimetype: 'image/jpeg',
            fileLength: 2048,
            caption: 'the box',
          },
        },
        messageTimestamp: 1_700_000_600,
      },
    });
    const chunk = historyChunkOf(
      {
        ...SYNC,
        conversations: [
          { id: '15552800011@s.whatsapp.net', messages: [image('I1', false), image('I2', true)] },
        ],
      },
      100,
    );
    expect(
      chunk.messages.map((m) => [m.platformMessageId, m.direction, m.text, m.attachment?.type]),
    ).to.deep.equal([
      ['I1', 'inbound', 'the box', 'image'],
      ['I2', 'outbound', 'the box', 'image'],
    ]);
    for (const m of chunk.messages) {
      const kept = proto.WebMessageInfo.decode(m.mediaMessage!);
      expect(kept.key?.id).to.equal(m.platformMessageId);
      expect(Buffer.from(kept.message!.imageMessage!.mediaKey!).equals(Buffer.alloc(32, 7))).to.equal(true);
    }
    // A text keeps none.
    expect(historyChunkOf(SYNC, 100).messages.every((m) => m.mediaMessage === undefined)).to.equal(true);
  });

  it('When a chunk holds more than maxMessages, then the newest are kept and the rest counted as skipped', () => {
    const chunk = historyChunkOf(SYNC, 2);
    expect(chunk.messages.map((m) => m.platformMessageId)).to.deep.equal(['G1', 'G2']);
    expect(chunk.skipped).to.equal(3);
  });

  it('When a chunk carries push names only, then it has no messages', () => {
    const chunk = historyChunkOf({ ...SYNC, syncType: proto.HistorySync.HistorySyncType.PUSH_NAME }, 100);
    expect(chunk.messages).to.deep.equal([]);
    expect(chunk.syncType).to.equal('PUSH_NAME');
  });

  it('When the file is fetched, then it is decrypted, checked and inflated; from a sandbox’s media host when one is named', async () => {
    const plain = deflateSync(proto.HistorySync.encode(SYNC).finish());
    const { body, notice: n } = await notice(plain);
    const asked: string[] = [];
    const chunk = await readHistory(
      n,
      async (url) => (asked.push(url), body),
      { maxBytes: 1 << 20, maxMessages: 100 },
      'https://127.0.0.1:9443',
    );
    expect(asked).to.deep.equal(['https://127.0.0.1:9443/v/t62.history/abc.enc']);
    expect(chunk.messages).to.have.length(5);
    await readHistory(n, async (url) => (asked.push(url), body), { maxBytes: 1 << 20, maxMessages: 1 });
    expect(asked[1]).to.equal('https://mmg.whatsapp.net/v/t62.history/abc.enc');
  });

  it('When the chunk comes inline (initialHistBootstrapInlinePayload, no media key), then it is inflated and read without a download, its NCT salt too; an inline bomb is refused', async () => {
    const salt = Buffer.alloc(32, 7);
    // Field 19 (nctSalt), which rc14's proto lacks, appended raw as the phone's encoder writes it.
    const encoded = Buffer.concat([
      proto.HistorySync.encode(SYNC).finish(),
      Buffer.from([0x9a, 0x01, 32]),
      salt,
    ]);
    const n = { id: 'N2', notification: { initialHistBootstrapInlinePayload: deflateSync(encoded) } };
    const limits = { maxBytes: 1 << 20, maxMessages: 100 };
    const never = async (): Promise<Buffer> => {
      throw new Error('an inline chunk is not downloaded');
    };
    const chunk = await readHistory(n, never, limits);
    expect(chunk.messages).to.have.length(5);
    expect(chunk.nctSalt).to.deep.equal(salt);
    expect(await readHistorySalt(n, never, limits)).to.deep.equal(salt);
    const bomb = {
      id: 'N3',
      notification: { initialHistBootstrapInlinePayload: deflateSync(Buffer.alloc(4 << 20)) },
    };
    expect(
      await readHistory(bomb, never, { maxBytes: 64 * 1024, maxMessages: 1 }).catch((e) => e),
    ).to.be.instanceOf(HistoryTooLargeError);
  });

  it('When the file is announced too large, inflates past the bound, or fails its MAC, then it is refused before anything is read from it', async () => {
    const limits = { maxBytes: 64 * 1024, maxMessages: 100 };
    const small = deflateSync(proto.HistorySync.encode(SYNC).finish());
    const announced = await notice(small, 65 * 1024);
    let fetched = 0;
    const err1 = await readHistory(announced.notice, async () => (fetched++, announced.body), limits).catch(
      (e) => e,
    );
    expect(err1).to.be.instanceOf(HistoryTooLargeError);
    expect(fetched).to.equal(0);

    // A deflate bomb: 4 MiB of zeros is a few kilobytes deflated.
    const bomb = await notice(deflateSync(Buffer.alloc(4 << 20)));
    const err2 = await readHistory(bomb.notice, async () => bomb.body, limits).catch((e) => e);
    expect(err2).to.be.instanceOf(HistoryTooLargeError);

    const tampered = Buffer.from(announced.body);
    tampered[0]! ^= 1;
    const honest = await notice(small);
    const err3 = await readHistory(honest.notice, async () => tampered, limits).catch((e) => e);
    expect(err3).to.be.instanceOf(MediaDecryptError);
  });

  it('When upserts carry a history notification, then only the account’s own (fromMe) ones are taken', () => {
    const notification = { directPath: '/x', syncType: proto.Message.HistorySyncType.INITIAL_BOOTSTRAP };
    const of = (fromMe: boolean, id: string): WAMessage => ({
      key: { remoteJid: '15552800001@s.whatsapp.net', fromMe, id },
      message: {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: notification,
        },
      },
    });
    const notices = historyNoticesOf([of(true, 'OWN'), of(false, 'SPOOF')]);
    expect(notices.map((n) => n.id)).to.deep.equal(['OWN']);
  });
});
