import { expect } from 'chai';
import WebSocket from 'ws';
import { startSimulator, type SimulatorHandle } from '../../src/index.js';

describe('messenger-sim: hostile input', function () {
  this.timeout(10_000);
  let sim: SimulatorHandle;

  before(async () => {
    sim = await startSimulator({ port: 0 });
  });

  after(async () => {
    await sim.close();
  });

  it('When a client sends garbage instead of a Noise hello, then only that socket is closed', async () => {
    const ws = new WebSocket(sim.info.wsUrl);
    await new Promise((resolve) => ws.once('open', resolve));
    const closed = new Promise((resolve) => ws.once('close', resolve));

    ws.send(Buffer.concat([Buffer.from('WA\x06\x03'), Buffer.from([0, 0, 5]), Buffer.from('junk!')]));
    await closed;
    const health = await fetch(`${sim.controlUrl}/health`);

    expect(health.status).to.equal(200);
  });

  it('When something connects to another path, then the upgrade is refused', async () => {
    const ws = new WebSocket(sim.info.wsUrl.replace('/ws/chat', '/elsewhere'));

    const outcome = await new Promise<string>((resolve) => {
      ws.once('open', () => resolve('open'));
      ws.once('error', () => resolve('error'));
    });

    expect(outcome).to.equal('error');
  });
});
