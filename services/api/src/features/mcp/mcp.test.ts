import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { expect } from 'chai';
import { z } from 'zod';
import { MAX_CONTACT_CHECK } from '@mgw/contracts';
import { createMcpServer } from './mcp-server.js';
import { callRoute, type Caller } from './route-call.js';
import { toolSchemas } from './tool-schemas.js';

/** A request the stand-in API heard: its method, path, headers and body. */
interface Heard {
  method: string;
  path: string;
  authorization?: string;
  idempotencyKey?: string;
  body?: unknown;
}

/**
 * The MCP tools without the API: each tool calls one route over HTTP to the server the MCP request
 * came to — here a stand-in server of this process (the fast lane lets a test talk to its own),
 * answering each route as told — and an MCP client talks to the tools over an in-memory transport.
 */
describe('MCP: the tools call the routes of the server they came to (a stand-in API in this process)', () => {
  let server: Server;
  let caller: Caller;
  let heard: Heard[];
  let answer: (h: Heard) => { status: number; body: unknown };

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const h: Heard = {
          method: req.method!,
          path: req.url!,
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
          ...(req.headers['idempotency-key']
            ? { idempotencyKey: String(req.headers['idempotency-key']) }
            : {}),
          ...(raw ? { body: JSON.parse(raw) as unknown } : {}),
        };
        heard.push(h);
        const { status, body } = answer(h);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    caller = {
      host: '127.0.0.1',
      port: (server.address() as AddressInfo).port,
      authorization: 'Bearer tok-1',
    };
  });
  after(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    heard = [];
    answer = () => ({ status: 200, body: { success: true } });
  });

  async function connected(): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(caller, 5).connect(serverSide);
    const client = new Client({ name: 'mcp-test', version: '1' });
    await client.connect(clientSide);
    return client;
  }

  it('When a route is called, then it goes to the caller’s server with the caller’s authorization, its query and JSON body, and answers its status and body', async () => {
    answer = () => ({ status: 202, body: { success: true, messageId: 'm-1' } });
    expect(
      await callRoute(caller, 'POST', '/api/messenger/v1/send', {
        json: { to: '15550001111', text: 'Hi' },
        headers: { 'idempotency-key': 'k-1' },
      }),
    ).to.deep.equal({ status: 202, body: { success: true, messageId: 'm-1' } });
    await callRoute(caller, 'GET', '/api/messenger/v1/messages', {
      query: { limit: '5', direction: 'inbound' },
    });
    await callRoute(caller, 'GET', '/api/messenger/v1/status', { query: {} });
    expect(heard).to.deep.equal([
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

  it('When the server answers something that is not JSON, then the call fails', async () => {
    answer = () => ({ status: 200, body: undefined });
    let thrown: unknown;
    await callRoute(caller, 'GET', '/x').catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(Error);
  });

  it('When the tools are listed, then each names its route, with its schema', async () => {
    const client = await connected();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).to.deep.equal([
      'send_message',
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
    await client.close();
  });

  it('When a tool is called, then its route is called with the arguments as the route takes them, and the body is the result', async () => {
    answer = (h) => ({ status: 200, body: { success: true, path: h.path } });
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
    await client.callTool({ name: 'resolve_username', arguments: { username: 'alice.shop' } });
    await client.callTool({ name: 'mark_chat_read', arguments: { chatId: '15550001111' } });
    expect(heard.map((h) => [h.method, h.path, h.body, h.idempotencyKey])).to.deep.equal([
      ['POST', '/api/messenger/v1/send', { to: ['15550001111'], text: 'Hi' }, 'k-2'],
      ['GET', '/api/messenger/v1/chats/120363000000000001%40g.us/messages?limit=10', undefined, undefined],
      ['POST', '/api/messenger/v1/contacts/username', { username: 'alice.shop' }, undefined],
      ['POST', '/api/messenger/v1/chats/15550001111/read', undefined, undefined],
    ]);
    await client.close();
  });

  it("When the route refuses, then the tool's result is an error carrying the route's status and error body", async () => {
    answer = () => ({ status: 429, body: { success: false, error: 'rate_limited', resetIn: 30 } });
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

  it('When the schemas judge arguments, then the limits of the contracts hold (recipients, numbers, a PIN, a cursor)', () => {
    const s = toolSchemas(3);
    expect(z.object(s.sendMessage).safeParse({ to: ['1', '2', '3', '4'], text: 'x' }).success).to.equal(
      false,
    );
    expect(z.object(s.sendMessage).safeParse({ to: '15550001111', text: 'x' }).success).to.equal(true);
    const phones = Array.from({ length: MAX_CONTACT_CHECK + 1 }, () => '15550001111');
    expect(z.object(s.checkNumbers).safeParse({ phones }).success).to.equal(false);
    expect(z.object(s.resolveUsername).safeParse({ username: 'alice', pin: '12' }).success).to.equal(false);
    expect(z.object(s.listMessages).safeParse({ cursor: 'abc' }).success).to.equal(false);
    expect(z.object(s.listMessages).safeParse({ cursor: '123', limit: 100 }).success).to.equal(true);
    expect(z.object(s.markChatRead).safeParse({ chatId: 'not a chat' }).success).to.equal(false);
  });
});
