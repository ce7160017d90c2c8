import { expect } from 'chai';
import { useStack, waitFor } from '../src/index.js';

describe('testing: a stack whose simulator runs as its own process (as npm start runs it)', function () {
  this.timeout(120_000);
  const stack = useStack({ simulatorProcess: true });

  it('When the simulator runs in its own process, then a device links and sends through it, the contact receives the message, and the in-process handle is refused', async () => {
    const s = stack();
    expect(s.simulator.pid).to.be.a('number').and.not.equal(process.pid);
    expect(() => s.sim).to.throw(/own process/);

    await s.linkByQr('15550990001');
    const res = await s.api('POST', '/send', { to: '15550990002', text: 'through the simulator process' });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    await waitFor(async () => (await s.inbox('15550990002')).length === 1, {
      timeoutMs: 30_000,
      what: 'the message arrives',
    });
    expect((await s.inbox('15550990002'))[0]).to.include({
      text: 'through the simulator process',
      from: '15550990001',
    });
  });
});
