import { expect } from 'chai';
import type { BaileysEventMap, ChatModification } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { TestDevice, until, startTestSimulator, simControl } from '@mgw/testing';

const ACCOUNT = '15550005001';
const CONTACT = '15550005002';

describe('messenger-sim: app-state sync — the phone shares its key, labels travel both ways as patches (real Baileys client)', function () {
  this.timeout(60_000);
  let sim: SimulatorHandle;
  let device: TestDevice;
  const labels: BaileysEventMap['labels.edit'][] = [];
  const associations: { labelId: string; chatId: string; type: string }[] = [];
  const chats: Record<string, unknown>[] = [];

  const call = (method: string, path: string, body?: unknown) => simControl(sim)(method, path, body);

  before(async () => {
    sim = await startTestSimulator();
    device = new TestDevice(sim.info);
    device.connect();
    const qr = await device.nextQr();
    const opened = device.waitForOpen(20_000);
    expect((await call('POST', '/phone/link', { qr, phone: ACCOUNT, name: 'Labels' })).status).to.equal(200);
    await opened;
    const sock = device.sock!;
    sock.ev.on('labels.edit', (l) => labels.push(l));
    sock.ev.on('labels.association', ({ association, type }) =>
      associations.push({ labelId: association.labelId, chatId: association.chatId, type }),
    );
    sock.ev.on('chats.update', (u) => chats.push(...(u as Record<string, unknown>[])));
  });
  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When the phone shares its key and creates a label and labels a chat, then the device decodes the patches (MACs and LT-hash checked) and reports both', async () => {
    expect(device.auth.creds.myAppStateKeyId).to.equal(undefined);
    const shared = await call('POST', `/accounts/${ACCOUNT}/app-state/key-share`);
    expect(shared.body).to.deep.equal({ devices: 1 });
    await until(() => !!device.auth.creds.myAppStateKeyId, 10_000, 'the app-state key at the device');

    expect(
      (await call('POST', `/accounts/${ACCOUNT}/labels`, { id: '3', name: 'VIP', color: 4 })).body,
    ).to.deep.equal({ version: 1 });
    await until(() => labels.length === 1, 10_000, 'labels.edit at the device');
    expect(labels[0]).to.deep.include({ id: '3', name: 'VIP', color: 4, deleted: false });

    await call('POST', `/accounts/${ACCOUNT}/chat-labels`, {
      labelId: '3',
      chat: `${CONTACT}@s.whatsapp.net`,
    });
    await until(() => associations.length === 1, 10_000, 'labels.association at the device');
    expect(associations[0]).to.deep.equal({ labelId: '3', chatId: `${CONTACT}@s.whatsapp.net`, type: 'add' });
  });

  it("When the device creates a label, labels a chat and archives, pins and mutes it, then the phone verifies each patch and the device's next sync goes on from there", async () => {
    const sock = device.sock!;
    await sock.addLabel('', { id: '8', name: 'Follow up', color: 2, deleted: false });
    await sock.addChatLabel(`${CONTACT}@s.whatsapp.net`, '8');
    const jid = `${CONTACT}@s.whatsapp.net`;
    const lastMessages = [
      { key: { remoteJid: jid, id: 'X1', fromMe: false }, messageTimestamp: Math.floor(Date.now() / 1000) },
    ];
    const mods: ChatModification[] = [
      { archive: true, lastMessages },
      { pin: true },
      { mute: Date.now() + 3_600_000 },
    ];
    for (const mod of mods) await sock.chatModify(mod, jid);
    const view = (await call('GET', `/accounts/${ACCOUNT}/app-state`)).body as {
      collections: Record<string, number>;
      labels: Record<string, unknown>;
      chatLabels: string[];
      chats: Record<string, { archived?: boolean; pinned?: boolean; mutedUntil?: number }>;
    };
    expect(view.labels).to.deep.equal({
      '3': { name: 'VIP', color: 4 },
      '8': { name: 'Follow up', color: 2 },
    });
    expect(view.chatLabels).to.deep.equal([`3|${jid}`, `8|${jid}`]);
    expect(view.chats[jid]).to.include({ archived: true, pinned: true });
    expect(view.chats[jid]!.mutedUntil).to.be.greaterThan(Date.now());
    expect(view.collections).to.deep.include({ regular: 4, regular_low: 2, regular_high: 1 });

    // The phone labels again: the device, at version 4 of `regular`, takes the 5th patch.
    await call('POST', `/accounts/${ACCOUNT}/labels`, { id: '3', name: 'VIP+', color: 4 });
    await until(() => labels.some((l) => l.name === 'VIP+'), 10_000, 'the renamed label at the device');
  });

  it('When the control input is wrong, then 400 or 404', async () => {
    expect((await call('POST', `/accounts/${ACCOUNT}/labels`, { id: 'x', name: 'a' })).status).to.equal(400);
    expect((await call('POST', `/accounts/${ACCOUNT}/labels`, { id: '1', name: ' ' })).status).to.equal(400);
    expect(
      (await call('POST', `/accounts/${ACCOUNT}/labels`, { id: '1', name: 'a', color: 99 })).status,
    ).to.equal(400);
    expect(
      (await call('POST', `/accounts/${ACCOUNT}/chat-labels`, { labelId: '1', chat: 'x' })).status,
    ).to.equal(400);
    expect((await call('POST', '/accounts/15550009999/labels', { id: '1', name: 'a' })).status).to.equal(404);
  });
});
