import { expect } from 'chai';
import QRCode from 'qrcode';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { TestDevice, until, startTestSimulator } from '@mgw/testing';

const ACCOUNT = '15550003001';
const CONTACT = '15550003002';

describe('messenger-sim: HTTP control API', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sim.controlUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    sim = await startTestSimulator();
  });

  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When asked for health and info, then it answers with the wsUrl, the root key and the media CA', async () => {
    const health = await call('GET', '/health');
    const info = await call('GET', '/info');

    expect(health.status).to.equal(200);
    expect(info.status).to.equal(200);
    expect(info.body.wsUrl).to.match(/^ws:\/\/127\.0\.0\.1:\d+\/ws\/chat$/);
    expect(info.body.rootPublicKey).to.match(/^[0-9a-f]{64}$/);
    expect(info.body.mediaCaPem).to.match(/^-----BEGIN CERTIFICATE-----/);
  });

  it('When the phone is given the QR as a PNG data URL, then it links the device', async () => {
    device = new TestDevice(sim.info);
    device.connect();
    const qr = await device.nextQr();
    const opened = device.waitForOpen(20_000);

    const linked = await call('POST', '/phone/link', {
      qr: await QRCode.toDataURL(qr),
      phone: ACCOUNT,
      name: 'HTTP Account',
      pictureUrl: 'https://p.test/account.jpg',
    });
    await opened;
    const devices = await call('GET', `/devices/${ACCOUNT}`);
    const ownPicture = await device.sock!.profilePictureUrl(device.auth.creds.me!.id, 'image');

    expect(linked.status).to.equal(200);
    expect(linked.body.jid).to.equal(`${ACCOUNT}:1@s.whatsapp.net`);
    expect(devices.body.devices).to.have.length(1);
    expect((devices.body.devices as Array<{ connected: boolean }>)[0]!.connected).to.equal(true);
    expect(device.auth.creds.me?.name).to.equal('HTTP Account');
    expect(ownPicture).to.equal('https://p.test/account.jpg');
  });

  it('When clients open sockets, then GET /connections/opened lists when each was accepted', async () => {
    const before = (await call('GET', '/connections/opened')).body.times as number[];
    const t0 = Date.now();
    const other = new TestDevice(sim.info);
    other.connect();
    await other.nextQr(); // the socket is open: the QR came over it
    const after = (await call('GET', '/connections/opened')).body.times as number[];
    await other.end();
    expect(after.length).to.equal(before.length + 1);
    expect(after[after.length - 1]).to.be.within(t0, Date.now());
  });

  it('When contacts are registered and write in, then the device receives it and the inbox shows what it sent', async () => {
    const contact = await call('POST', '/contacts', {
      phone: CONTACT,
      name: 'Http Contact',
      pictureUrl: 'https://p.test/c.jpg',
    });
    const absent = await call('POST', '/contacts', { phone: '15550003099', onWhatsApp: false });
    const received = new Promise<WAMessage>((resolve) =>
      device.sock!.ev.on('messages.upsert', ({ messages }) => {
        const m = messages.find((x) => x.message?.conversation === 'ping over http');
        if (m) resolve(m);
      }),
    );

    const inbound = await call('POST', `/contacts/${CONTACT}/send`, { to: ACCOUNT, text: 'ping over http' });
    await received;
    const sent = await device.sock!.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: 'pong' });
    await until(() => sim.inbox(CONTACT).length > 0);
    const inbox = await call('GET', `/inbox/${CONTACT}`);
    const media = await call('GET', '/media');

    expect(contact.body).to.include({ phone: CONTACT, name: 'Http Contact', onWhatsApp: true });
    expect(absent.body).to.deep.equal({ phone: '15550003099', onWhatsApp: false });
    expect(inbound.status).to.equal(200);
    expect(inbound.body.id).to.be.a('string');
    expect(inbox.body.messages).to.have.length(1);
    expect(media.body).to.deep.equal({ uploads: 0, files: 0, storedBytes: 0 });
    expect((inbox.body.messages as Array<Record<string, unknown>>)[0]).to.include({
      id: sent!.key.id,
      from: ACCOUNT,
      text: 'pong',
    });
  });

  it('When contacts chat by LID (addressing lid, hidePhone) or a lid-mapping is pushed, then Baileys sees the LID chat with the number only where it may, and stores the pushed pair', async () => {
    const upsert = (text: string) =>
      new Promise<WAMessage>((resolve) =>
        device.sock!.ev.on('messages.upsert', ({ messages }) => {
          const m = messages.find((x) => x.message?.conversation === text);
          if (m) resolve(m);
        }),
      );
    const lidChat = await call('POST', '/contacts', { phone: '15550003010', addressing: 'lid' });
    const hidden = await call('POST', '/contacts', { phone: '15550003011', hidePhone: true });
    expect(lidChat.body).to.include({ addressing: 'lid', hidePhone: false });
    expect(hidden.body).to.include({ addressing: 'lid', hidePhone: true });

    const fromLidChat = upsert('by lid');
    await call('POST', '/contacts/15550003010/send', { to: ACCOUNT, text: 'by lid' });
    expect((await fromLidChat).key).to.include({
      remoteJid: `${String(lidChat.body.lid)}@lid`,
      remoteJidAlt: '15550003010@s.whatsapp.net',
      addressingMode: 'lid',
    });
    const fromHidden = upsert('hidden');
    await call('POST', '/contacts/15550003011/send', { to: ACCOUNT, text: 'hidden' });
    const key = (await fromHidden).key;
    expect(key.remoteJid).to.equal(`${String(hidden.body.lid)}@lid`);
    expect(key.remoteJidAlt).to.equal(undefined);

    const told = await call('POST', '/contacts', { phone: '15550003012' });
    const mapping = new Promise<{ lid: string; pn: string }>((resolve) =>
      device.sock!.ev.on('lid-mapping.update', (m) => resolve(m)),
    );
    const pushed = await call('POST', '/contacts/15550003012/lid-mapping', { to: ACCOUNT });
    expect(pushed.body).to.deep.equal({ lid: `${String(told.body.lid)}@lid`, devices: 1 });
    expect(await mapping).to.deep.equal({
      lid: `${String(told.body.lid)}@lid`,
      pn: '15550003012@s.whatsapp.net',
    });

    expect((await call('POST', '/contacts', { phone: '15550003013', hidePhone: 'yes' })).status).to.equal(
      400,
    );
    expect(
      (await call('POST', '/contacts', { phone: '15550003013', addressing: 'username' })).status,
    ).to.equal(400);
    expect((await call('POST', '/contacts/15550003099/lid-mapping', { to: ACCOUNT })).status).to.equal(404);
  });

  it('When the device looks a number up, then GET /accounts/:phone/contact-lookups counts it; an unknown account is a 404', async () => {
    await device.sock!.onWhatsApp(CONTACT);
    const lookups = await call('GET', `/accounts/${ACCOUNT}/contact-lookups`);
    const unknown = await call('GET', '/accounts/15559999999/contact-lookups');

    expect(lookups.status).to.equal(200);
    expect(lookups.body.count).to.equal(1);
    expect(lookups.body.queries).to.have.length(1);
    expect((lookups.body.queries as Array<{ numbers: number; at: string }>)[0]!.numbers).to.equal(1);
    expect(unknown.status).to.equal(404);
  });

  it('When receipt delays are changed, then the config reflects them and invalid values are rejected', async () => {
    const updated = await call('PUT', '/config', { receiptDelayMs: 350, readDelayMs: null });
    const invalid = await call('PUT', '/config', { receiptDelayMs: -5 });

    expect(updated.body).to.deep.equal({ receiptDelayMs: 350, readDelayMs: null });
    expect(invalid.status).to.equal(400);
    expect(invalid.body.error).to.match(/receiptDelayMs/);
  });

  it('When faults are armed over HTTP, then they act on the device and can be cleared', async () => {
    const closed = device.waitForClose();
    const refuse = await call('POST', '/faults/refuse-login', { phone: ACCOUNT, reason: 500, count: 1 });
    const dropped = await call('POST', '/faults/drop', { phone: ACCOUNT });
    await closed;
    device.connect();
    const refused = await device.waitForClose();
    const stall = await call('POST', '/faults/stall', { xmlns: 'usync' });
    const ack = await call('POST', '/faults/ack-error', { phone: ACCOUNT, error: 500 });
    const cleared = await call('DELETE', '/faults');
    device.connect();
    await device.waitForOpen();

    expect([refuse.status, stall.status, ack.status, cleared.status]).to.deep.equal([200, 200, 200, 200]);
    expect(dropped.body).to.deep.equal({ dropped: 1 });
    expect(refused.statusCode).to.equal(500);
  });

  it('When the phone unlinks over HTTP, then the device is removed', async () => {
    const closed = device.waitForClose();

    const res = await call('POST', '/phone/unlink', { phone: ACCOUNT });

    expect(res.body).to.deep.equal({ removed: [1] });
    expect((await closed).statusCode).to.equal(401);
    expect((await call('GET', `/devices/${ACCOUNT}`)).body.devices).to.deep.equal([]);
  });

  it('When a request is malformed or unknown, then it gets a 4xx JSON error', async () => {
    const missing = await call('POST', '/phone/link', { qr: 'x' });
    const badQr = await call('POST', '/phone/link', { qr: 'not a qr', phone: ACCOUNT });
    const expired = await call('POST', '/phone/link', { qr: '2@gone,AAAA,AAAA,AAAA,1', phone: ACCOUNT });
    const badJson = await call('POST', '/contacts', '{nope');
    const unknownPhone = await call('GET', '/devices/19990000000');
    const noRoute = await call('GET', '/nowhere');
    const noDevice = await call('POST', `/contacts/${CONTACT}/send`, { to: ACCOUNT, text: 'x' });

    expect(missing).to.deep.equal({ status: 400, body: { error: 'phone is required' } });
    expect(badQr.status).to.equal(400);
    expect(expired.status).to.equal(404);
    expect(badJson.status).to.equal(400);
    expect(unknownPhone.status).to.equal(404);
    expect(noRoute.status).to.equal(404);
    expect(noDevice.status).to.equal(409);
    for (const r of [badQr, expired, badJson, unknownPhone, noRoute, noDevice])
      expect(r.body.error).to.be.a('string');
  });
});
