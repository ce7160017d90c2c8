import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import {
  generateWAMessageFromContent,
  prepareWAMessageMedia,
  WAMessageStatus,
  type WAMessage,
  type WAMessageUpdate,
} from '@whiskeysockets/baileys';
import type { InboxMessage, SimulatorHandle } from '../src/index.js';
import { until, type TestDevice, linkTestDevice, startTestSimulator } from '@mgw/testing';

const ACCOUNT = '15550001001';
const CONTACT = '15550001002';
const contactJid = `${CONTACT}@s.whatsapp.net`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('messenger-sim: messaging through a linked device', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;

  const arrival = (phone: string, id: string | null | undefined): Promise<InboxMessage> =>
    until(() => sim.inbox(phone).find((m) => m.id === id), 10_000, `message ${id} in ${phone}'s inbox`);

  before(async () => {
    sim = await startTestSimulator();
    sim.upsertContact({
      phone: CONTACT,
      name: 'Known Contact',
      pictureUrl: 'https://pps.example.test/known.jpg',
    });
    device = await linkTestDevice(sim, ACCOUNT);
  });

  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When the device writes to a registered contact, then the contact reads the exact text', async () => {
    const sent = await device.sock!.sendMessage(contactJid, { text: 'to a known contact ✓' });

    const got = await arrival(CONTACT, sent!.key.id);

    expect(got).to.include({ from: ACCOUNT, type: 'text', text: 'to a known contact ✓' });
  });

  it('When the same message id is sent twice (a retry), then the contact shows it once and counts the copy', async () => {
    const messageId = '3EB0' + randomBytes(9).toString('hex').toUpperCase();
    await device.sock!.sendMessage(contactJid, { text: 'sent twice' }, { messageId });
    await arrival(CONTACT, messageId);
    await device.sock!.sendMessage(contactJid, { text: 'sent twice' }, { messageId });

    const entry = await until(
      () => sim.inbox(CONTACT).find((m) => m.id === messageId && m.duplicates === 1),
      10_000,
      'the second copy to be counted',
    );

    expect(sim.inbox(CONTACT).filter((m) => m.id === messageId)).to.have.length(1);
    expect(entry).to.include({ text: 'sent twice', duplicates: 1 });
  });

  const mediaCases = [
    { type: 'image', content: (b: Buffer) => ({ image: b, caption: 'an image', mimetype: 'image/jpeg' }) },
    { type: 'video', content: (b: Buffer) => ({ video: b, caption: 'a video', mimetype: 'video/mp4' }) },
    { type: 'audio', content: (b: Buffer) => ({ audio: b, mimetype: 'audio/ogg; codecs=opus', seconds: 3 }) },
    {
      type: 'document',
      content: (b: Buffer) => ({
        document: b,
        fileName: 'report.pdf',
        mimetype: 'application/pdf',
        caption: 'the report',
      }),
    },
    { type: 'sticker', content: (b: Buffer) => ({ sticker: b, mimetype: 'image/webp' }) },
  ] as const;

  for (const { type, content } of mediaCases) {
    it(`When the device sends a ${type}, then the contact decrypts the upload byte for byte`, async () => {
      const bytes = randomBytes(20_000 + Math.floor(Math.random() * 5000));

      const sent = await device.sock!.sendMessage(contactJid, content(bytes) as never);
      const got = await arrival(CONTACT, sent!.key.id);

      expect(got.type).to.equal(type);
      expect(got.fileSha256).to.equal(sha256(bytes));
      expect(got.fileLength).to.equal(bytes.length);
      const spec = content(bytes) as { mimetype: string; caption?: string; fileName?: string };
      expect(got.mimetype).to.equal(spec.mimetype);
      if (spec.caption) expect(got.caption).to.equal(spec.caption);
      if (spec.fileName) expect(got.fileName).to.equal(spec.fileName);
    });
  }

  it('When media is uploaded once and relayed to two contacts, then both decrypt it and the host saw one upload', async () => {
    const bytes = randomBytes(30_000);
    const uploadsBefore = sim.simulator.media.uploads;
    const prepared = await prepareWAMessageMedia(
      { image: bytes, caption: 'shared', mimetype: 'image/jpeg' },
      { upload: device.sock!.waUploadToServer },
    );

    const ids: string[] = [];
    for (const to of [contactJid, '15550001004@s.whatsapp.net']) {
      const message = generateWAMessageFromContent(
        to,
        { imageMessage: prepared.imageMessage },
        { userJid: device.auth.creds.me!.id },
      );
      await device.sock!.relayMessage(to, message.message!, { messageId: message.key.id! });
      ids.push(message.key.id!);
    }
    const [first, second] = await Promise.all([arrival(CONTACT, ids[0]), arrival('15550001004', ids[1])]);

    expect(sim.simulator.media.uploads - uploadsBefore).to.equal(1);
    for (const got of [first, second])
      expect(got).to.include({ type: 'image', caption: 'shared', fileSha256: sha256(bytes) });
  });

  it('When the device replies to a message, then the contact sees the quoted message id', async () => {
    const original = await device.sock!.sendMessage(contactJid, { text: 'original' });

    const reply = await device.sock!.sendMessage(
      contactJid,
      { text: 'the reply' },
      { quoted: original as WAMessage },
    );
    const got = await arrival(CONTACT, reply!.key.id);

    expect(got).to.include({ text: 'the reply', quotedId: original!.key.id });
  });

  it('When a contact writes to the account, then the device receives the text as a notify upsert', async () => {
    const received = new Promise<WAMessage>((resolve) => {
      device.sock!.ev.on('messages.upsert', ({ messages, type }) => {
        const m = messages.find((x) => !x.key.fromMe && x.message?.conversation);
        if (m && type === 'notify') resolve(m);
      });
    });

    const { id } = await sim.sendInbound(CONTACT, ACCOUNT, 'hello gateway');
    const message = await received;

    expect(message.key.id).to.equal(id);
    expect(message.message?.conversation).to.equal('hello gateway');
    expect(message.key.remoteJid).to.equal(contactJid);
    expect(message.pushName).to.equal('Known Contact');
  });

  it('When a contact has a profile picture, then the device gets its URL; when not, the query fails with 404', async () => {
    const url = await device.sock!.profilePictureUrl(contactJid, 'image');
    expect(url).to.equal('https://pps.example.test/known.jpg');

    sim.upsertContact({ phone: '15550001003' });
    const error = await device.sock!.profilePictureUrl('15550001003@s.whatsapp.net').then(
      () => undefined,
      (err: { data?: unknown }) => err,
    );
    // Baileys throws a Boom whose `data` (not statusCode) carries the server's error code
    expect(error?.data).to.equal(404);
  });

  it('When a number is registered as not on WhatsApp, then onWhatsApp reports only the real users', async () => {
    sim.upsertContact({ phone: '15550001099', onWhatsApp: false });

    const result = await device.sock!.onWhatsApp('15550001099', CONTACT);

    expect(result?.map((r) => r.jid)).to.deep.equal([contactJid]);
    expect(result?.[0]?.exists).to.equal(true);
  });

  it('When the device looks numbers up (usync contact queries), then the account counts each number and each query with its time; device-list queries do not count', async () => {
    sim.upsertContact({ phone: '15550001098', onWhatsApp: false });
    const before = sim.contactLookups(ACCOUNT);
    await device.sock!.onWhatsApp('15550001098', CONTACT);
    await device.sock!.onWhatsApp(CONTACT);
    // A send's device-list query (usync by JID, no contact protocol) is no contact lookup.
    await device.sock!.sendMessage(contactJid, { text: 'not a lookup' });

    const after = sim.contactLookups(ACCOUNT);
    expect(after.count - before.count).to.equal(3);
    const fresh = after.queries.slice(before.queries.length);
    expect(fresh.map((q) => q.numbers)).to.deep.equal([2, 1]);
    expect(Date.parse(fresh[1]!.at)).to.be.at.least(Date.parse(fresh[0]!.at));
    expect(sim.contactLookups(CONTACT)).to.deep.equal({ count: 0, queries: [] });
  });

  it('When contacts only deliver or never acknowledge, then the device sees exactly those receipts', async () => {
    sim.upsertContact({ phone: '15550001005', receipts: 'delivered' });
    sim.upsertContact({ phone: '15550001006', receipts: 'none' });
    const updates: WAMessageUpdate[] = [];
    device.sock!.ev.on('messages.update', (u) => updates.push(...u));

    const delivered = await device.sock!.sendMessage('15550001005@s.whatsapp.net', { text: 'deliver only' });
    const silent = await device.sock!.sendMessage('15550001006@s.whatsapp.net', { text: 'no receipts' });
    await arrival('15550001006', silent!.key.id);
    // A marker sent after both, to a contact who reads: the simulator times every receipt alike
    // from its message and sends them in order on the one socket, so once the marker's read is
    // here, any receipt of the two messages before it would be too (no fixed sleep).
    const marker = await device.sock!.sendMessage(contactJid, { text: 'marker, read' });
    await until(
      () => updates.some((u) => u.key.id === marker!.key.id && u.update.status === WAMessageStatus.READ),
      10_000,
      "the marker's read receipt",
    );

    const statusesOf = (id: string | null | undefined) =>
      updates.filter((u) => u.key.id === id).map((u) => u.update.status);
    expect(statusesOf(delivered!.key.id)).to.deep.equal([WAMessageStatus.DELIVERY_ACK]);
    expect(statusesOf(silent!.key.id)).to.deep.equal([]);
  });

  it('When an ack error is armed, then the message update carries ERROR and nothing is delivered', async () => {
    const updates: WAMessageUpdate[] = [];
    device.sock!.ev.on('messages.update', (u) => updates.push(...u));
    sim.ackError({ phone: ACCOUNT, error: 479 });

    const sent = await device.sock!.sendMessage(contactJid, { text: 'doomed' });
    const failed = await until(() =>
      updates.find((u) => u.key.id === sent!.key.id && u.update.status === WAMessageStatus.ERROR),
    );

    expect(failed.update.messageStubParameters).to.deep.equal(['479']);
    expect(sim.inbox(CONTACT).some((m) => m.id === sent!.key.id)).to.equal(false);
  });

  it('When a query is stalled, then the client times out on it and the next one is answered', async () => {
    sim.stall({ phone: ACCOUNT, xmlns: 'w:profile:picture' });

    const stalled = await device.sock!.profilePictureUrl(contactJid, 'image', 500).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    const next = await device.sock!.profilePictureUrl(contactJid, 'image', 2000);

    expect(stalled).to.match(/timed out/i);
    expect(next).to.equal('https://pps.example.test/known.jpg');
  });

  it('When a query is delayed, then it is answered that much later, and the next one at once', async () => {
    sim.stall({ phone: ACCOUNT, xmlns: 'w:profile:picture', ms: 600 });

    // Two queries in flight: the stall holds the first (at least its 600 ms: a lower bound, which
    // load cannot break) and only the first, so the one sent after it is answered before it — an
    // order, not a clock. The client's own timeout (10 s, 10 x the delayed one's ~0.6 s quiet) is
    // only there so a lost answer fails.
    const answered: string[] = [];
    const t0 = Date.now();
    const query = (name: string) =>
      device.sock!.profilePictureUrl(contactJid, 'image', 10_000).then((url) => {
        answered.push(name);
        return { url, ms: Date.now() - t0 };
      });
    const [delayed, next] = await Promise.all([query('delayed'), query('next')]);

    expect(delayed.url).to.equal('https://pps.example.test/known.jpg');
    expect(delayed.ms).to.be.at.least(580);
    expect(next.url).to.equal(delayed.url);
    expect(answered).to.deep.equal(['next', 'delayed']);
  });
});
