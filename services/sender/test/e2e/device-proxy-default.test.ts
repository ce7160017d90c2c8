import { expect } from 'chai';
import { startTinyproxy, useStack, waitFor, type ProxyServerHandle, type Stack } from '@mgw/testing';

const ADMIN_TOKEN = 'proxy-default-e2e-admin-token-0123456789';

const admin = (s: Stack, method: string, p: string, body?: unknown) =>
  s.adminApi(ADMIN_TOKEN, method, p, body);

describe('e2e: DEVICE_PROXY_URL, the default proxy, and a device set to connect directly (real tinyproxy)', function () {
  this.timeout(180_000);
  let tiny: ProxyServerHandle;
  // The proxy starts first: its URL is the services' DEVICE_PROXY_URL (read when the stack starts).
  const env: Record<string, string> = { ADMIN_API_TOKEN: ADMIN_TOKEN };
  before(async () => {
    tiny = await startTinyproxy();
    env.DEVICE_PROXY_URL = tiny.url(null);
  });
  const stack = useStack({ env });
  let stopped = false;
  after(async () => {
    if (!stopped) await tiny?.stop();
  });
  /** `127.0.0.1:<port>` of the simulator's WebSocket: what a device's proxy connects to. */
  const wsTarget = () => new URL(stack().simulator.info.wsUrl).host;
  const throughProxy = async () => (await tiny.targets()).filter((t) => t === wsTarget()).length;

  it('When DEVICE_PROXY_URL is set, then a device with no proxy of its own links and sends through it', async () => {
    const s = stack();
    await s.linkByQr('15550920001', 'Default proxy');
    // The pairing socket and the sender's socket both went through the default proxy.
    expect(await throughProxy()).to.be.at.least(2);
    const res = await s.api('POST', '/send', { to: '15550929001', text: 'through the default proxy' });
    expect(res.status).to.equal(202);
    await waitFor(async () => (await s.inbox('15550929001')).length === 1, { what: 'the text' });
    const own = await admin(s, 'GET', `/devices/${s.deviceId}/proxy`);
    expect(own.status, 'no setting of its own').to.equal(404);
  });

  it('When the device is set to connect directly, then it reconnects past the default proxy (it sends with that proxy dead), and removing the setting brings the default back', async () => {
    const s = stack();
    for (const bad of [{ direct: false }, { direct: true, url: tiny.url(null) }, {}]) {
      const res = await admin(s, 'PUT', `/devices/${s.deviceId}/proxy`, bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
    }
    const before = await throughProxy();
    const put = await admin(s, 'PUT', `/devices/${s.deviceId}/proxy`, { direct: true });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data).to.have.keys(['direct', 'updatedAt']);
    expect((put.body.data as { direct: boolean }).direct).to.equal(true);
    expect(put.body.applied).to.equal('reconnecting');
    expect((await admin(s, 'GET', `/devices/${s.deviceId}/proxy`)).body.data).to.deep.equal(put.body.data);
    await s.waitForStatus('connected');
    const first = await s.api('POST', '/send', { to: '15550929002', text: 'directly' });
    expect(first.status).to.equal(202);
    await waitFor(async () => (await s.inbox('15550929002')).length === 1, { what: 'the first direct text' });
    expect(await throughProxy(), 'no new connection through the default proxy').to.equal(before);
    // With the default proxy gone, only a direct socket can carry the next message.
    await tiny.stop();
    stopped = true;
    const res = await s.api('POST', '/send', { to: '15550929003', text: 'directly, the proxy dead' });
    expect(res.status).to.equal(202);
    await waitFor(async () => (await s.inbox('15550929003')).length === 1, {
      what: 'the text sent directly with the proxy dead',
      timeoutMs: 30_000,
    });
    // Without its setting the device uses the default again, which is dead now: connecting, and why.
    const del = await admin(s, 'DELETE', `/devices/${s.deviceId}/proxy`);
    expect(del.status).to.equal(200);
    await waitFor(async () => (await s.api('GET', '/status')).body.reason === 'proxy_unreachable', {
      what: 'the default proxy in use again (and dead)',
      timeoutMs: 40_000,
    });
  });
});
