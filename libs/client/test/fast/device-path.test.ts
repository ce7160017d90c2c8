import { expect } from 'chai';
import { createGatewayClient, devicePath } from '@mgw/client';

/**
 * A workspace token's client (docs/workspaces.md): every device route goes under
 * /api/messenger/v1/devices/{deviceId}/…, with its method, headers and body as they were; the
 * workspace's own routes stay. Checked on the requests a stand-in fetch receives.
 */
describe('@mgw/client: a workspace token names its device in the path', () => {
  const heard: { method: string; url: string; auth: string | null; body: string }[] = [];
  const fetch = async (input: Request) => {
    heard.push({
      method: input.method,
      url: input.url,
      auth: input.headers.get('authorization'),
      body: await input.text(),
    });
    return new Response(JSON.stringify({ success: true, messageId: 'm', status: 'connected' }), {
      status: 202,
      headers: { 'content-type': 'application/json' },
    });
  };
  beforeEach(() => (heard.length = 0));

  it('When paths are moved, then device routes get the prefix and the workspace routes and other paths do not', () => {
    expect(devicePath('/api/messenger/v1/send', 'd1')).to.equal('/api/messenger/v1/devices/d1/send');
    expect(devicePath('/api/messenger/v1/messages/abc', 'd1')).to.equal(
      '/api/messenger/v1/devices/d1/messages/abc',
    );
    for (const own of [
      '/api/messenger/v1/devices',
      '/api/messenger/v1/devices/d2',
      '/api/messenger/v1/tokens/t',
      '/api/messenger/v1/workspace',
    ])
      expect(devicePath(own, 'd1'), own).to.equal(own);
    expect(devicePath('/healthz', 'd1')).to.equal('/healthz');
  });

  it('When a client with deviceId sends and reads, then each request goes to the device path with its token and body; forDevice moves another', async () => {
    const client = createGatewayClient({ baseUrl: 'http://gw.test/', token: 'wt', deviceId: 'd0123', fetch });
    await client.sendText('15550001111', 'hello');
    await client.status();
    await client.forDevice('d0456').status();
    await client.api.GET('/api/messenger/v1/devices');
    const plain = createGatewayClient({ baseUrl: 'http://gw.test', token: 'dt', fetch });
    await plain.status();
    expect(heard.map((h) => [h.method, h.url, h.auth])).to.deep.equal([
      ['POST', 'http://gw.test/api/messenger/v1/devices/d0123/send', 'Bearer wt'],
      ['GET', 'http://gw.test/api/messenger/v1/devices/d0123/status', 'Bearer wt'],
      ['GET', 'http://gw.test/api/messenger/v1/devices/d0456/status', 'Bearer wt'],
      ['GET', 'http://gw.test/api/messenger/v1/devices', 'Bearer wt'],
      ['GET', 'http://gw.test/api/messenger/v1/status', 'Bearer dt'],
    ]);
    expect(JSON.parse(heard[0]!.body)).to.deep.equal({ to: '15550001111', text: 'hello' });
  });
});
