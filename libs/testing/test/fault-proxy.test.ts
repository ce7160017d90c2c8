import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startFaultProxy, type FaultProxy } from '../src/fault-proxy.js';

/** The test kit's fault proxy, in front of the suite's real Redis (127.0.0.1). */
describe('testing: the fault proxy (blackhole, resets, latency)', () => {
  let proxy: FaultProxy;
  let client: Redis;

  beforeEach(async () => {
    proxy = await startFaultProxy({ port: Number(new URL(process.env.REDIS_URL!).port) });
    client = new Redis(proxy.via(process.env.REDIS_URL!), { maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    expect(await client.ping()).to.equal('PONG');
  });
  afterEach(async () => {
    client.disconnect();
    await proxy.stop();
  });

  const settledWithin = <T>(p: Promise<T>, ms: number) =>
    Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

  it('When the link is blackholed, then nothing answers and nothing is closed; when it heals, what waited is answered', async () => {
    proxy.set('blackhole');
    const held = client.ping();
    expect(await settledWithin(held, 500)).to.equal(false);
    expect(client.status).to.equal('ready');
    proxy.set('pass');
    expect(await held).to.equal('PONG');
  });

  it('When it blackholes after a pattern, then the command holding it runs and only its answer waits', async () => {
    const key = `fault-proxy-${Date.now()}`;
    const after = proxy.blackholeAfter(key);
    const set = client.set(key, '1', 'EX', 60);
    await after;
    expect(await settledWithin(set, 300)).to.equal(false);
    const direct = new Redis(process.env.REDIS_URL!);
    expect(await direct.get(key), 'it ran on the server').to.equal('1');
    direct.disconnect();
    proxy.set('pass');
    expect(await set).to.equal('OK');
  });

  it('When resets are on, then open connections are cut and new ones too, until it passes again', async () => {
    const closed = new Promise((r) => client.once('close', r));
    proxy.set('reset');
    await closed;
    expect(proxy.connections).to.equal(0);
    proxy.set('pass');
    expect(await client.ping()).to.equal('PONG');
  });

  it('When latency is set, then each way is delayed by it', async () => {
    proxy.latency(100);
    const started = Date.now();
    await client.ping();
    expect(Date.now() - started).to.be.at.least(190);
  });
});
