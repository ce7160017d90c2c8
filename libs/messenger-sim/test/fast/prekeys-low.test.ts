import { expect } from 'chai';
import type { UserFacingSocketConfig } from '@whiskeysockets/baileys';
import type { SimulatorHandle } from '../../src/index.js';
import { companionBundle, PRE_KEY_LOW_COUNT, type CompanionDevice } from '../../src/directory.js';
import { startTestSimulator, TestDevice, until } from '@mgw/testing';

/**
 * The server side of one-time pre-keys: each bundle fetched for a companion hands out one of its
 * uploaded pre-keys, and when fewer than PRE_KEY_LOW_COUNT are left the server tells the device
 * (`<notification type="encrypt" from="s.whatsapp.net"><count value="N"/></notification>`), as
 * WhatsApp does, and the device uploads more.
 */
describe('messenger-sim: a companion told its one-time pre-keys run low uploads more', function () {
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

  async function link(phone: string, socketConfig: Partial<UserFacingSocketConfig>) {
    const device = new TestDevice(sim.info, { socketConfig });
    devices.push(device);
    device.connect();
    const qr = await device.nextQr();
    const opened = device.waitForOpen(20_000);
    await sim.linkWithQr({ qr, phone, name: 'Pre-key Account' });
    await opened;
    return [...sim.simulator.directory.get(phone)!.devices.values()][0]!;
  }

  it('When bundle fetches leave fewer than 5 pre-keys, then the device is notified once and tops the server back up to its wanted count', async () => {
    const companion: CompanionDevice = await link('15550003101', {
      initialPreKeyCount: 12,
      wantedPreKeyCount: 12,
    });
    await until(() => companion.preKeys.size === 12 || undefined, 10_000, 'the initial upload of 12');

    // Contacts start sessions: one pre-key each, down to one under the threshold.
    for (let i = 0; companion.preKeys.size >= PRE_KEY_LOW_COUNT; i++)
      expect(companionBundle(companion).preKey).to.exist;
    expect(companion.preKeys.size).to.equal(PRE_KEY_LOW_COUNT - 1);
    expect(companion.preKeysLowNotified).to.equal(1);

    await until(() => companion.preKeys.size === 12 || undefined, 10_000, 'the refill back to 12');
    // No new notification on the way back up; the 4 left plus 8 fresh ids.
    expect(companion.preKeysLowNotified).to.equal(1);
    expect([...companion.preKeys.keys()].filter((id) => id > 12)).to.have.length(8);
  });

  it("When Baileys' defaults are kept (no wanted count), then the notification still gets an upload (5 keys)", async () => {
    const companion = await link('15550003102', { initialPreKeyCount: 8 });
    await until(() => companion.preKeys.size === 8 || undefined, 10_000, 'the initial upload of 8');
    while (companion.preKeys.size >= PRE_KEY_LOW_COUNT) companionBundle(companion);
    await until(
      () => companion.preKeys.size === PRE_KEY_LOW_COUNT - 1 + 5 || undefined,
      10_000,
      'a refill of 5',
    );
  });
});
