import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startSimulator, type SimulatorHandle } from '../../src/index.js';
import { until, type TestDevice, linkTestDevice } from '@mgw/testing';

describe('messenger-sim: advertised host (containers)', function () {
  this.timeout(30_000);
  let sim: SimulatorHandle;
  let device: TestDevice | undefined;

  before(async () => {
    // bound on every interface, advertised under another loopback address, as `sandbox` in compose
    sim = await startSimulator({ port: 0, host: '0.0.0.0', publicHost: '127.0.0.2' });
  });

  after(async () => {
    await device?.end();
    await sim.close();
  });

  it('When bound to 0.0.0.0 with a public host, then clients connect and upload media under that name', async () => {
    expect(sim.info.wsUrl).to.match(/^ws:\/\/127\.0\.0\.2:\d+\/ws\/chat$/);
    device = await linkTestDevice(sim, '15550007001');
    const bytes = randomBytes(10_000);

    const sent = await device.sock!.sendMessage('15550007002@s.whatsapp.net', {
      document: bytes,
      mimetype: 'application/zip',
      fileName: 'a.zip',
    });
    const got = await until(() => sim.inbox('15550007002').find((m) => m.id === sent!.key.id));

    expect(got.fileSha256).to.equal(createHash('sha256').update(bytes).digest('hex'));
    expect(sim.simulator.media.hostname).to.match(/^127\.0\.0\.2:\d+$/);
  });
});
