import { expect } from 'chai';
import { StandInApi } from './mcp-fixture.js';
import { callRoute } from './route-call.js';

/** A route called over HTTP on the server the MCP request came to: a stand-in API of this process. */
describe("callRoute: a route of the caller's server called with the caller's authorization (a stand-in API in this process)", () => {
  const api = new StandInApi();
  before(() => api.start());
  after(() => api.stop());
  beforeEach(() => api.reset());

  it('When a route is called, then it goes to the caller’s server with the caller’s authorization, its query and JSON body, and answers its status and body', async () => {
    api.answer = () => ({ status: 202, body: { success: true, messageId: 'm-1' } });
    expect(
      await callRoute(api.caller, 'POST', '/api/messenger/v1/send', {
        json: { to: '15550001111', text: 'Hi' },
        headers: { 'idempotency-key': 'k-1' },
      }),
    ).to.deep.equal({ status: 202, body: { success: true, messageId: 'm-1' } });
    await callRoute(api.caller, 'GET', '/api/messenger/v1/messages', {
      query: { limit: '5', direction: 'inbound' },
    });
    await callRoute(api.caller, 'GET', '/api/messenger/v1/status', { query: {} });
    expect(api.heard).to.deep.equal([
      {
        method: 'POST',
        path: '/api/messenger/v1/send',
        authorization: 'Bearer tok-1',
        idempotencyKey: 'k-1',
        body: { to: '15550001111', text: 'Hi' },
      },
      {
        method: 'GET',
        path: '/api/messenger/v1/messages?limit=5&direction=inbound',
        authorization: 'Bearer tok-1',
      },
      { method: 'GET', path: '/api/messenger/v1/status', authorization: 'Bearer tok-1' },
    ]);
  });

  it('When the MCP request named a device (a workspace token), then each route is called for it under the same prefix', async () => {
    await callRoute({ ...api.caller, device: 'd0123456789abcdef' }, 'GET', '/api/messenger/v1/status', {
      query: { a: '1' },
    });
    expect(api.heard.map((h) => h.path)).to.deep.equal([
      '/api/messenger/v1/devices/d0123456789abcdef/status?a=1',
    ]);
  });

  it('When the server answers something that is not JSON, then the call fails', async () => {
    api.answer = () => ({ status: 200, body: undefined });
    let thrown: unknown;
    await callRoute(api.caller, 'GET', '/x').catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(Error);
  });
});
