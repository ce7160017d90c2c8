import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { expect } from 'chai';
import { createMcpServer } from './mcp-server.js';
import { StandInApi } from './mcp-fixture.js';

/**
 * The MCP tools without the API: each calls one route over HTTP to the server the MCP request came
 * to (a stand-in API of this process), and an MCP client talks to them over an in-memory transport.
 */
describe('createMcpServer: the tools call the routes of the server they came to (a stand-in API in this process)', () => {
  const api = new StandInApi();
  before(() => api.start());
  after(() => api.stop());
  beforeEach(() => api.reset());

  async function connected(): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(api.caller, 5).connect(serverSide);
    const client = new Client({ name: 'mcp-test', version: '1' });
    await client.connect(clientSide);
    return client;
  }

  it('When the tools are listed, then each names its route, with its schema', async () => {
    const client = await connected();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.deep.equal([
      'send_message',
      'send_template',
      'list_templates',
      'check_numbers',
      'resolve_username',
      'get_status',
      'list_messages',
      'get_message',
      'list_chats',
      'get_chat_messages',
      'mark_chat_read',
    ]);
    expect(tools.find((t) => t.name === 'send_message')!.inputSchema.required).to.deep.equal(['to', 'text']);
    expect(tools.find((t) => t.name === 'send_template')!.inputSchema.required).to.deep.equal([
      'to',
      'name',
      'language',
    ]);
    await client.close();
  });

  it('When a tool is called, then its route is called with the arguments as the route takes them, and the body is the result', async () => {
    api.answer = (h) => ({ status: 200, body: { success: true, path: h.path } });
    const client = await connected();
    const sent = await client.callTool({
      name: 'send_message',
      arguments: { to: ['15550001111'], text: 'Hi', idempotencyKey: 'k-2' },
    });
    expect(sent.structuredContent).to.deep.equal({ success: true, path: '/api/messenger/v1/send' });
    expect(sent.isError).to.equal(undefined);
    await client.callTool({
      name: 'get_chat_messages',
      arguments: { chatId: '120363000000000001@g.us', limit: 10 },
    });
    await client.callTool({
      name: 'send_template',
      arguments: {
        to: '15550001111',
        name: 'order_update',
        language: 'en_US',
        components: [{ type: 'body', parameters: [{ type: 'text', text: '#1' }] }],
      },
    });
    await client.callTool({
      name: 'list_templates',
      arguments: { name: 'order_update', status: 'APPROVED' },
    });
    await client.callTool({ name: 'resolve_username', arguments: { username: 'alice.shop' } });
    await client.callTool({ name: 'mark_chat_read', arguments: { chatId: '15550001111' } });
    expect(api.heard.map((h) => [h.method, h.path, h.body, h.idempotencyKey])).to.deep.equal([
      ['POST', '/api/messenger/v1/send', { to: ['15550001111'], text: 'Hi' }, 'k-2'],
      ['GET', '/api/messenger/v1/chats/120363000000000001%40g.us/messages?limit=10', undefined, undefined],
      [
        'POST',
        '/api/messenger/v1/send',
        {
          to: '15550001111',
          template: {
            name: 'order_update',
            language: 'en_US',
            components: [{ type: 'body', parameters: [{ type: 'text', text: '#1' }] }],
          },
        },
        undefined,
      ],
      ['GET', '/api/messenger/v1/cloud/templates?name=order_update&status=APPROVED', undefined, undefined],
      ['POST', '/api/messenger/v1/contacts/username', { username: 'alice.shop' }, undefined],
      ['POST', '/api/messenger/v1/chats/15550001111/read', undefined, undefined],
    ]);
    await client.close();
  });

  it("When the route refuses, then the tool's result is an error carrying the route's status and error body", async () => {
    api.answer = () => ({ status: 429, body: { success: false, error: 'rate_limited', resetIn: 30 } });
    const client = await connected();
    const result = await client.callTool({ name: 'get_status', arguments: {} });
    expect(result.isError).to.equal(true);
    expect(result.structuredContent).to.deep.equal({
      status: 429,
      success: false,
      error: 'rate_limited',
      resetIn: 30,
    });
    await client.close();
  });
});
