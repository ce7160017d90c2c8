import { expect } from 'chai';
import type { WAMessageUpdate } from '@whiskeysockets/baileys';
import { startSimulator, type SimulatorHandle } from '../../src/index.js';
import { until, type TestDevice, linkTestDevice, startTestSimulator } from '@mgw/testing';

const CONTACT = '15550004009';

describe('messenger-sim: several accounts at once', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  const devices: TestDevice[] = [];

  before(async () => {
    sim = await startTestSimulator();
  });

  after(async () => {
    await Promise.all(devices.map((d) => d.end()));
    await sim.close();
  });

  it('When two linked accounts write to the same contact, then each message arrives from its own account and receipts do not cross', async () => {
    const [a, b] = await Promise.all([
      linkTestDevice(sim, '15550004001', 'A'),
      linkTestDevice(sim, '15550004002', 'B'),
    ]);
    devices.push(a, b);
    const updatesA: WAMessageUpdate[] = [];
    const updatesB: WAMessageUpdate[] = [];
    a.sock!.ev.on('messages.update', (u) => updatesA.push(...u));
    b.sock!.ev.on('messages.update', (u) => updatesB.push(...u));

    const [fromA, fromB] = await Promise.all([
      a.sock!.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: 'from A' }),
      b.sock!.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: 'from B' }),
    ]);
    await until(() => sim.inbox(CONTACT).length === 2);
    await until(
      () => updatesA.some((u) => u.update.status === 3) && updatesB.some((u) => u.update.status === 3),
    );

    const inbox = sim.inbox(CONTACT);
    expect(inbox.find((m) => m.id === fromA!.key.id)).to.include({ from: '15550004001', text: 'from A' });
    expect(inbox.find((m) => m.id === fromB!.key.id)).to.include({ from: '15550004002', text: 'from B' });
    expect(updatesA.every((u) => u.key.id === fromA!.key.id)).to.equal(true);
    expect(updatesB.every((u) => u.key.id === fromB!.key.id)).to.equal(true);
  });
});

describe('messenger-sim: several devices on one account', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  const devices: TestDevice[] = [];

  before(async () => {
    sim = await startTestSimulator();
  });

  after(async () => {
    await Promise.all(devices.map((d) => d.end()));
    await sim.close();
  });

  it('When two devices are linked to one account, then both are listed and both can send to a contact', async () => {
    const first = await linkTestDevice(sim, '15550006001');
    const second = await linkTestDevice(sim, '15550006001');
    devices.push(first, second);

    const a = await first.sock!.sendMessage('15550006002@s.whatsapp.net', { text: 'from device 1' });
    const b = await second.sock!.sendMessage('15550006002@s.whatsapp.net', { text: 'from device 2' });
    await until(() => sim.inbox('15550006002').length === 2);

    expect(sim.devices('15550006001').map((d) => [d.id, d.connected])).to.deep.equal([
      [1, true],
      [2, true],
    ]);
    expect(second.auth.creds.me?.id).to.equal('15550006001:2@s.whatsapp.net');
    expect(sim.inbox('15550006002').map((m) => [m.id, m.text])).to.deep.equal([
      [a!.key.id, 'from device 1'],
      [b!.key.id, 'from device 2'],
    ]);
  });
});

describe('messenger-sim: unknown numbers', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice | undefined;

  before(async () => {
    sim = await startSimulator({ port: 0, unknownNumbers: 'reject' });
  });

  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When unknown numbers are rejected, then only registered contacts are on WhatsApp', async () => {
    device = await linkTestDevice(sim, '15550005001');
    sim.upsertContact({ phone: '15550005002' });

    const result = await device.sock!.onWhatsApp('15550005002', '15550005003');

    expect(result?.map((r) => r.jid)).to.deep.equal(['15550005002@s.whatsapp.net']);
    expect(sim.devices('15550005001')).to.have.length(1);
  });
});
