import { expect } from 'chai';
import type { WAMessageUpdate } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { until, type TestDevice, linkTestDevice, startTestSimulator } from '@mgw/testing';

describe('messenger-sim: QR linking and text', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice;

  before(async () => {
    sim = await startTestSimulator();
  });

  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When the phone scans the QR, then the device restarts (515) and opens logged in as the account', async () => {
    device = await linkTestDevice(sim, '15550000001', 'Test Account');

    expect(device.closes.map((c) => c.statusCode)).to.deep.equal([515]);
    expect(device.auth.creds.me?.id).to.match(/^15550000001:1@s\.whatsapp\.net$/);
    expect(device.auth.creds.me?.lid).to.match(/^\d+:1@lid$/);
    expect(device.auth.creds.me?.name).to.equal('Test Account');
    expect(sim.devices('15550000001')).to.have.length(1);
    expect(sim.devices('15550000001')[0]!.connected).to.equal(true);
  });

  it('When the device sends a text to a new contact, then the contact decrypts it and receipts come back', async () => {
    const updates: WAMessageUpdate[] = [];
    device.sock!.ev.on('messages.update', (u) => updates.push(...u));

    const sent = await device.sock!.sendMessage('15550000002@s.whatsapp.net', {
      text: 'hello from the gateway',
    });

    const arrived = await until(
      () => sim.inbox('15550000002').find((m) => m.id === sent!.key.id),
      10_000,
      'inbox',
    );
    expect(arrived).to.include({ from: '15550000001', type: 'text', text: 'hello from the gateway' });
    const statuses = await until(
      () => {
        const s = updates.filter((u) => u.key.id === sent!.key.id).map((u) => u.update.status);
        return s.includes(4) ? s : undefined;
      },
      10_000,
      'read receipt',
    );
    expect(statuses).to.include(3);
    expect(statuses).to.include(4);
  });
});
