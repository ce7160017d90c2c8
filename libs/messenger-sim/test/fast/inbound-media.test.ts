import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { AttachmentType, InboxMessage, SimulatorHandle } from '../../src/index.js';
import {
  until,
  type TestDevice,
  download,
  mediaDispatcher,
  linkTestDevice,
  startTestSimulator,
} from '@mgw/testing';

const ACCOUNT = '15550006001';
const CONTACT = '15550006002';
const accountJid = `${ACCOUNT}@s.whatsapp.net`;
const contactJid = `${CONTACT}@s.whatsapp.net`;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

type MediaContent = {
  mimetype?: string | null;
  caption?: string | null;
  fileName?: string | null;
  fileSha256?: Uint8Array | null;
  fileLength?: unknown;
  contextInfo?: { stanzaId?: string | null } | null;
};

describe('messenger-sim: what contacts send to the account', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  let dispatcher: Awaited<ReturnType<typeof mediaDispatcher>>;
  const received: WAMessage[] = [];

  const receivedById = (id: string): Promise<WAMessage> =>
    until(() => received.find((m) => m.key.id === id), 10_000, `message ${id} on the device`);
  const arrival = (phone: string, id: string | null | undefined): Promise<InboxMessage> =>
    until(() => sim.inbox(phone).find((m) => m.id === id), 10_000, `message ${id} in ${phone}'s inbox`);

  before(async () => {
    sim = await startTestSimulator();
    sim.upsertContact({ phone: CONTACT, name: 'Media Contact' });
    device = await linkTestDevice(sim, ACCOUNT);
    device.sock!.ev.on('messages.upsert', ({ messages }) => received.push(...messages));
    dispatcher = await mediaDispatcher(sim);
  });

  after(async () => {
    await device?.end();
    await sim.close();
  });

  const cases: Array<{ type: AttachmentType; mimeType?: string; caption?: string; fileName?: string }> = [
    { type: 'image', caption: 'a photo from the contact' },
    { type: 'video', mimeType: 'video/mp4', caption: 'a clip' },
    { type: 'audio', mimeType: 'audio/ogg; codecs=opus' },
    { type: 'sticker' },
  ];

  for (const spec of cases) {
    it(`When a contact sends ${spec.type === 'image' || spec.type === 'audio' ? 'an' : 'a'} ${spec.type}, then the device downloads and decrypts it byte for byte`, async () => {
      const bytes = randomBytes(8_000 + Math.floor(Math.random() * 4_000));

      const { id, media } = await sim.sendInbound(CONTACT, ACCOUNT, {
        attachment: { ...spec, base64: bytes.toString('base64') },
      });
      const message = await receivedById(id);
      const content = (message.message as Record<string, MediaContent>)[`${spec.type}Message`]!;
      const downloaded = await download(message, dispatcher);

      expect(message.key.remoteJid).to.equal(contactJid);
      expect(sha256(downloaded)).to.equal(sha256(bytes));
      expect(downloaded.length).to.equal(bytes.length);
      expect(Buffer.from(content.fileSha256!).toString('hex')).to.equal(media!.fileSha256);
      expect(Number(content.fileLength)).to.equal(bytes.length);
      if (spec.mimeType) expect(content.mimetype).to.equal(spec.mimeType);
      if (spec.caption) expect(content.caption).to.equal(spec.caption);
    });
  }

  it('When a contact sends a document through the HTTP API, then the device gets its name, type and exact bytes', async () => {
    const bytes = randomBytes(15_000);

    const res = await fetch(`${sim.controlUrl}/contacts/${CONTACT}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        to: ACCOUNT,
        text: 'the signed contract',
        attachment: {
          type: 'document',
          base64: bytes.toString('base64'),
          mimeType: 'application/pdf',
          fileName: 'contract.pdf',
        },
      }),
    });
    const body = (await res.json()) as { id: string; media: { fileSha256: string; fileLength: number } };
    const message = await receivedById(body.id);
    const doc = message.message!.documentMessage!;
    const downloaded = await download(message, dispatcher);

    expect(res.status).to.equal(200);
    expect(body.media).to.include({ fileSha256: sha256(bytes), fileLength: bytes.length });
    expect(doc).to.include({
      fileName: 'contract.pdf',
      mimetype: 'application/pdf',
      caption: 'the signed contract',
    });
    expect(downloaded.equals(bytes)).to.equal(true);
  });

  it("When a contact answers one of the account's messages, then the device sees the quoted id, author and text", async () => {
    const question = await device.sock!.sendMessage(contactJid, { text: 'Which day suits you?' });
    await arrival(CONTACT, question!.key.id);

    const { id } = await sim.sendInbound(CONTACT, ACCOUNT, { text: 'Tuesday', quotedId: question!.key.id! });
    const reply = (await receivedById(id)).message!.extendedTextMessage!;

    expect(reply.text).to.equal('Tuesday');
    expect(reply.contextInfo).to.include({ stanzaId: question!.key.id, participant: accountJid });
    expect(reply.contextInfo?.quotedMessage?.conversation).to.equal('Which day suits you?');
  });

  it('When a contact answers with a photo, then the attachment carries the quoted id', async () => {
    const offer = await device.sock!.sendMessage(contactJid, { text: 'Send me a picture of the damage' });
    await arrival(CONTACT, offer!.key.id);
    const bytes = randomBytes(5_000);

    const { id } = await sim.sendInbound(CONTACT, ACCOUNT, {
      attachment: { type: 'image', base64: bytes.toString('base64') },
      quotedId: offer!.key.id!,
    });
    const message = await receivedById(id);

    expect(message.message?.imageMessage?.contextInfo?.stanzaId).to.equal(offer!.key.id);
    expect((await download(message, dispatcher)).equals(bytes)).to.equal(true);
  });

  it('When the input names no text and no attachment, or an unknown type, then the API answers 400', async () => {
    const post = (body: unknown) =>
      fetch(`${sim.controlUrl}/contacts/${CONTACT}/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    const empty = await post({ to: ACCOUNT });
    const gif = await post({ to: ACCOUNT, attachment: { type: 'gif', base64: 'AAAA' } });
    const noBytes = await post({ to: ACCOUNT, attachment: { type: 'image' } });

    expect([empty.status, gif.status, noBytes.status]).to.deep.equal([400, 400, 400]);
    expect(((await gif.json()) as { error: string }).error).to.match(/attachment.type/);
  });
});
