import { expect } from 'chai';
import {
  jidNormalizedUser,
  proto,
  toNumber,
  type BaileysEventMap,
  type WAMessage,
} from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { TestDevice, until, mediaDispatcher, startTestSimulator, simControl } from '@mgw/testing';

const ACCOUNT = '15550007001';
const CONTACT = '15550007002';
const LID_CONTACT = '15550007003';
const MEMBER = '15550007004';
const contactJid = `${CONTACT}@s.whatsapp.net`;

type HistorySet = BaileysEventMap['messaging-history.set'];
type Dispatcher = Awaited<ReturnType<typeof mediaDispatcher>>;

/**
 * The notification names the blob by `directPath` alone and Baileys fetches it from
 * `https://mmg.whatsapp.net<directPath>`: a sandbox gateway routes that host to the simulator's
 * media host (and trusts its CA), as this dispatcher does.
 */
async function historyDispatcher(sim: SimulatorHandle): Promise<Dispatcher> {
  const base = await mediaDispatcher(sim);
  const media = `https://${sim.simulator.media.hostname}`;
  return {
    dispatch: (opts: Parameters<Dispatcher['dispatch']>[0], handler: Parameters<Dispatcher['dispatch']>[1]) =>
      base.dispatch(
        { ...opts, origin: String(opts.origin) === 'https://mmg.whatsapp.net' ? media : opts.origin },
        handler,
      ),
  } as Dispatcher;
}

const byId = (set: HistorySet, id: string): WAMessage => {
  const found = set.messages.find((m) => m.key.id === id);
  if (!found) throw new Error(`message ${id} is not in the history set`);
  return found;
};

describe('messenger-sim: history sync — the phone sends a linked device its chats and messages (real Baileys client)', function () {
  this.timeout(60_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  let second: TestDevice | undefined;
  let lidJid = '';
  let groupJid = '';
  let lidGroupJid = '';
  let memberLid = '';
  const sets: HistorySet[] = [];

  const call = (method: string, path: string, body?: unknown) => simControl(sim)(method, path, body);
  const sync = (body: unknown) => call('POST', `/accounts/${ACCOUNT}/history-sync`, body);

  before(async () => {
    sim = await startTestSimulator();
    sim.upsertContact({ phone: CONTACT, name: 'Alice' });
    lidJid = `${sim.upsertContact({ phone: LID_CONTACT, name: 'Bob', addressing: 'lid' }).lid}@lid`;
    memberLid = `${sim.upsertContact({ phone: MEMBER, name: 'Carol' }).lid}@lid`;
    sim.upsertContact({ phone: ACCOUNT, name: 'History' });
    const group = await call('POST', '/groups', { subject: 'Team', members: [ACCOUNT, MEMBER] });
    groupJid = String(group.body.id);
    const lidGroup = await call('POST', '/groups', {
      subject: 'LID team',
      members: [ACCOUNT, MEMBER],
      addressing: 'lid',
    });
    lidGroupJid = String(lidGroup.body.id);

    device = new TestDevice(sim.info, {
      socketConfig: {
        shouldSyncHistoryMessage: () => true,
        options: { dispatcher: await historyDispatcher(sim) },
      },
    });
    device.connect();
    const qr = await device.nextQr();
    const opened = device.waitForOpen(20_000);
    expect((await call('POST', '/phone/link', { qr, phone: ACCOUNT, name: 'History' })).status).to.equal(200);
    await opened;
    device.sock!.ev.on('messaging-history.set', (set) => sets.push(set));
  });
  after(async () => {
    await second?.end();
    await device?.end();
    await sim.close();
  });

  it('When the phone sends the initial history (a 1:1 chat both ways, a LID chat, a phone- and a LID-addressed group), then the device downloads, decrypts and inflates it and reports chats, contacts and messages with their keys, texts and times', async () => {
    const now = Math.floor(Date.now() / 1000);
    const uploads = sim.simulator.media.stats().uploads;
    const res = await sync({
      conversations: [
        {
          with: CONTACT,
          name: 'Alice',
          unreadCount: 1,
          messages: [
            { id: 'A1', fromMe: false, text: 'hi, are you there?', at: now - 300 },
            { id: 'A2', fromMe: true, text: 'yes, how can I help?', at: now - 200 },
            { id: 'A3', fromMe: false, text: 'my order is late', at: now - 100 },
          ],
        },
        { with: lidJid, messages: [{ id: 'L1', fromMe: false, text: 'hello over LID', at: now - 400 }] },
        {
          with: groupJid,
          name: 'Team',
          messages: [
            { id: 'G1', fromMe: false, author: MEMBER, text: 'meeting at 3', at: now - 500 },
            { id: 'G2', fromMe: true, text: 'see you there', at: now - 450 },
          ],
        },
        {
          with: lidGroupJid,
          messages: [{ id: 'G3', fromMe: false, author: MEMBER, text: 'by LID', at: now - 600 }],
        },
      ],
    });
    expect(res.status).to.equal(200);
    expect(res.body.devices).to.equal(1);
    expect(res.body.bytes).to.be.a('number').greaterThan(0);
    expect(sim.simulator.media.stats().uploads).to.equal(uploads + 1);

    await until(() => sets.length === 1, 15_000, 'messaging-history.set at the device');
    const set = sets[0]!;
    expect(set.syncType).to.equal(proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP);
    expect(set.isLatest).to.equal(true);
    expect(set.progress).to.equal(100);

    expect(set.chats.map((c) => c.id).sort()).to.deep.equal(
      [contactJid, groupJid, lidGroupJid, lidJid].sort(),
    );
    const alice = set.chats.find((c) => c.id === contactJid)!;
    expect(alice.name).to.equal('Alice');
    expect(alice.unreadCount).to.equal(1);
    // Baileys keeps the first message of each chat in `chats`: the newest, as the phone orders them.
    expect(alice.messages?.[0]?.message?.key?.id).to.equal('A3');
    expect(set.chats.find((c) => c.id === groupJid)!.name).to.equal('Team');

    expect(set.messages.map((m) => m.key.id).sort()).to.deep.equal([
      'A1',
      'A2',
      'A3',
      'G1',
      'G2',
      'G3',
      'L1',
    ]);
    const a1 = byId(set, 'A1');
    expect(a1.key).to.deep.include({ remoteJid: contactJid, fromMe: false });
    expect(a1.message?.conversation).to.equal('hi, are you there?');
    expect(toNumber(a1.messageTimestamp!)).to.equal(now - 300);
    expect(a1.pushName).to.equal('Alice');
    const a2 = byId(set, 'A2');
    expect(a2.key).to.deep.include({ remoteJid: contactJid, fromMe: true });
    expect(a2.message?.conversation).to.equal('yes, how can I help?');
    expect(toNumber(a2.messageTimestamp!)).to.equal(now - 200);

    const l1 = byId(set, 'L1');
    expect(l1.key).to.deep.include({ remoteJid: lidJid, fromMe: false });
    expect(l1.message?.conversation).to.equal('hello over LID');
    expect(l1.pushName).to.equal('Bob');

    const g1 = byId(set, 'G1');
    expect(g1.key).to.deep.include({
      remoteJid: groupJid,
      fromMe: false,
      participant: `${MEMBER}@s.whatsapp.net`,
    });
    expect(g1.message?.conversation).to.equal('meeting at 3');
    expect(toNumber(g1.messageTimestamp!)).to.equal(now - 500);
    expect(g1.pushName).to.equal('Carol');
    const g2 = byId(set, 'G2');
    expect(g2.key).to.deep.include({ remoteJid: groupJid, fromMe: true });
    expect(g2.key.participant ?? undefined).to.equal(undefined);
    expect(g2.message?.conversation).to.equal('see you there');
    // A LID-addressed group names its members by LID.
    expect(byId(set, 'G3').key).to.deep.include({
      remoteJid: lidGroupJid,
      fromMe: false,
      participant: memberLid,
    });

    // The phone names each known contact's other address: Baileys keeps the LID <-> phone pairs.
    expect(set.contacts.find((c) => c.id === lidJid)).to.deep.include({
      phoneNumber: `${LID_CONTACT}@s.whatsapp.net`,
    });
    const pn = await device.sock!.signalRepository.lidMapping.getPNForLID(lidJid);
    expect(jidNormalizedUser(pn ?? '')).to.equal(`${LID_CONTACT}@s.whatsapp.net`);
  });

  it('When the phone then sends a RECENT chunk, then it arrives too, no longer the latest', async () => {
    const now = Math.floor(Date.now() / 1000);
    const res = await sync({
      syncType: 'RECENT',
      chunkOrder: 2,
      progress: 40,
      conversations: [
        { with: '15550007009', messages: [{ id: 'R1', fromMe: true, text: 'older chat', at: now - 90_000 }] },
      ],
    });
    expect(res.body).to.include({ devices: 1 });
    await until(() => sets.length === 2, 15_000, 'the RECENT history set');
    const set = sets[1]!;
    expect(set.syncType).to.equal(proto.HistorySync.HistorySyncType.RECENT);
    expect(set.isLatest).to.equal(false);
    expect(set.progress).to.equal(40);
    expect(set.chunkOrder).to.equal(2);
    expect(set.chats.map((c) => c.id)).to.deep.equal(['15550007009@s.whatsapp.net']);
    const r1 = byId(set, 'R1');
    expect(r1.key).to.deep.include({ remoteJid: '15550007009@s.whatsapp.net', fromMe: true });
    expect(toNumber(r1.messageTimestamp!)).to.equal(now - 90_000);
  });

  it('When a chunk is sent inline, or the forms say random, then Baileys reads each chunk, an inline one from the notification itself (nothing uploaded)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const files = sim.simulator.media.stats().files;
    const res = await sync({
      form: 'inline',
      syncType: 'RECENT',
      conversations: [
        { with: '15550007010', messages: [{ id: 'I1', fromMe: false, text: 'inline', at: now }] },
      ],
    });
    expect(res.body).to.include({ devices: 1, form: 'inline' });
    await until(() => sets.length === 3, 15_000, 'the inline history set');
    expect(byId(sets[2]!, 'I1').message?.conversation).to.equal('inline');
    expect(sim.simulator.media.stats().files).to.equal(files);

    expect((await call('POST', '/forms', { history: 'sideways' })).status).to.equal(400);
    expect((await call('POST', '/forms', { history: 'random' })).body).to.include({ history: 'random' });
    const forms = new Set<string>();
    for (let i = 0; forms.size < 2 && i < 40; i++) {
      const sent = await sync({
        syncType: 'RECENT',
        conversations: [
          { with: '15550007010', messages: [{ id: `RND${i}`, fromMe: true, text: 'r', at: now }] },
        ],
      });
      forms.add(String(sent.body.form));
      await until(
        () => sets.some((s) => s.messages.some((m) => m.key.id === `RND${i}`)),
        15_000,
        `chunk ${i}`,
      );
    }
    expect([...forms].sort()).to.deep.equal(['download', 'inline']);
    expect((await call('POST', '/forms', { history: 'download' })).body).to.include({ history: 'download' });
  });

  it('When the control input is hostile, then 400 (nothing uploaded), and 404 for an unknown account', async () => {
    const uploads = sim.simulator.media.stats().uploads;
    const msg = { fromMe: true, text: 'x', at: 1_700_000_000 };
    const hostile: unknown[] = [
      {},
      { conversations: 'x' },
      { conversations: [null] },
      { syncType: 'FULL', conversations: [] },
      { progress: 101, conversations: [] },
      { chunkOrder: 1.5, conversations: [] },
      { conversations: [{ with: 'abc', messages: [] }] },
      { conversations: [{ with: `${CONTACT}@s.whatsapp.net`, messages: [] }] },
      { conversations: [{ with: CONTACT, messages: [{ ...msg, text: 'x'.repeat(4097) }] }] },
      { conversations: [{ with: CONTACT, messages: [{ ...msg, text: '' }] }] },
      { conversations: [{ with: CONTACT, messages: [{ ...msg, at: -5 }] }] },
      { conversations: [{ with: CONTACT, messages: [{ ...msg, fromMe: 'yes' }] }] },
      { conversations: [{ with: CONTACT, messages: [{ ...msg, id: '<script>' }] }] },
      {
        conversations: [
          {
            with: CONTACT,
            messages: [
              { ...msg, id: 'X' },
              { ...msg, id: 'X' },
            ],
          },
        ],
      },
      { conversations: [{ with: CONTACT, messages: [{ ...msg, fromMe: false, author: MEMBER }] }] },
      // An attachment: a known type, bytes, string fields; the text then optional (a caption).
      {
        conversations: [
          { with: CONTACT, messages: [{ fromMe: true, at: 1, attachment: { type: 'gif', base64: 'AA==' } }] },
        ],
      },
      {
        conversations: [
          { with: CONTACT, messages: [{ fromMe: true, at: 1, attachment: { type: 'image' } }] },
        ],
      },
      {
        conversations: [
          {
            with: CONTACT,
            messages: [{ fromMe: true, at: 1, attachment: { type: 'image', base64: 'AA==', caption: 5 } }],
          },
        ],
      },
      { conversations: [{ with: CONTACT, messages: [{ fromMe: true, at: 1, attachment: 'file' }] }] },
      {
        conversations: [
          {
            with: CONTACT,
            messages: Array.from({ length: 3 }, () => ({
              fromMe: true,
              at: 1,
              attachment: { type: 'document', base64: 'A'.repeat(3 * 1024 * 1024) },
            })),
          },
        ],
      },
      { conversations: [{ with: groupJid, messages: [{ ...msg, fromMe: false }] }] },
      { conversations: [{ with: CONTACT, name: 'n'.repeat(101), messages: [] }] },
      { conversations: [{ with: CONTACT, unreadCount: -1, messages: [] }] },
      {
        conversations: [
          { with: CONTACT, messages: [] },
          { with: CONTACT, messages: [] },
        ],
      },
      {
        conversations: Array.from({ length: 201 }, (_, i) => ({
          with: String(15550100000 + i),
          messages: [],
        })),
      },
      {
        conversations: Array.from({ length: 2 }, (_, i) => ({
          with: String(15550200000 + i),
          messages: Array.from({ length: 2_501 }, () => msg),
        })),
      },
    ];
    for (const body of hostile) {
      const res = await sync(body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).to.equal(400);
      expect(res.body.error).to.be.a('string');
    }
    expect(sim.simulator.media.stats().uploads).to.equal(uploads);
    const unknown = await call('POST', '/accounts/15550009999/history-sync', { conversations: [] });
    expect(unknown.status).to.equal(404);
  });

  it("When a device's shouldSyncHistoryMessage says no, then it gets the notification but no history set, and stays connected", async () => {
    second = new TestDevice(sim.info);
    second.connect();
    const qr = await second.nextQr();
    const opened = second.waitForOpen(20_000);
    expect((await call('POST', '/phone/link', { qr, phone: ACCOUNT })).status).to.equal(200);
    await opened;
    const closes = second.closes.length; // the 515 restart after linking
    const secondSets: HistorySet[] = [];
    const notifications: WAMessage[] = [];
    second.sock!.ev.on('messaging-history.set', (set) => secondSets.push(set));
    second.sock!.ev.on('messages.upsert', ({ messages }) =>
      notifications.push(
        ...messages.filter((m) => m.message?.protocolMessage?.historySyncNotification && m.key.fromMe),
      ),
    );

    const now = Math.floor(Date.now() / 1000);
    const had = sets.length;
    const res = await sync({
      syncType: 'RECENT',
      conversations: [{ with: CONTACT, messages: [{ id: 'S1', fromMe: false, text: 'later', at: now }] }],
    });
    expect(res.body).to.include({ devices: 2 });
    await until(() => notifications.length === 1, 15_000, 'the notification at the second device');
    await until(() => sets.length === had + 1, 15_000, 'the next history set at the first device');
    expect(byId(sets[had]!, 'S1').message?.conversation).to.equal('later');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(secondSets).to.deep.equal([]);
    expect(second.closes.length).to.equal(closes);
    expect(sim.devices(ACCOUNT).map((d) => d.connected)).to.deep.equal([true, true]);
  });
});
