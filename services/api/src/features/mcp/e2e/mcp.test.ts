import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  CHAT_ERRORS,
  ERRORS,
  MAX_CONTACT_CHECK,
  STRING_LIMITS,
  TEMPLATE_LIMITS,
  newPlatformMessageId,
} from '@mgw/contracts';
import { createRedis } from '@mgw/common';
import { ContactCache, DeviceCommandResponder, PoolStore, markLinked } from '@mgw/store';
import {
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

type Json = Record<string, unknown>;

/**
 * The MCP endpoint against the real app and Redis, through the SDK's own client (Client +
 * StreamableHTTPClientTransport): its tools call the routes, so the routes' token rules, rate
 * limits and checks answer as tool errors with the contract's strings. The whole way to the
 * simulator (a linked device, the message delivered): mcp-stack.test.ts beside this file.
 */
describe('MCP endpoint (POST /api/messenger/v1/mcp)', () => {
  const MAX_RECIPIENTS = 50;
  const STATUS_LIMIT = 3;
  let t: TestApi;
  let deviceId: string;
  let token: string;
  const clients: Client[] = [];

  async function connect(tok: string | null = token): Promise<Client> {
    const client = new Client({ name: 'mcp-test', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${t.api}/mcp`), {
      requestInit: { headers: tok ? { Authorization: `Bearer ${tok}` } : {} },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }
  const callTool = async (client: Client, name: string, args: Json = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const jsonOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text) as Json;

  before(async () => {
    t = await startApi({ maxRecipients: MAX_RECIPIENTS, rateLimits: { status: STATUS_LIMIT } });
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  it('When the tools are listed, then the eleven are there with the contract limits in their schemas', async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.map((tool) => tool.name).sort()).to.deep.equal([
      'check_numbers',
      'get_chat_messages',
      'get_message',
      'get_status',
      'list_chats',
      'list_messages',
      'list_templates',
      'mark_chat_read',
      'resolve_username',
      'send_message',
      'send_template',
    ]);
    const template = tools.find((tool) => tool.name === 'send_template')!.inputSchema as unknown as {
      properties: { name: Json; components: Json };
      required: string[];
    };
    expect(template.required).to.have.members(['to', 'name', 'language']);
    expect(template.properties.name.maxLength).to.equal(TEMPLATE_LIMITS.name);
    expect(template.properties.components.maxItems).to.equal(TEMPLATE_LIMITS.components);
    const send = tools.find((tool) => tool.name === 'send_message')!.inputSchema as unknown as {
      properties: { to: { anyOf: Json[] }; text: Json };
      required: string[];
    };
    expect(send.required).to.have.members(['to', 'text']);
    expect(send.properties.text.maxLength).to.equal(STRING_LIMITS.text);
    expect(send.properties.to.anyOf.find((s) => s.type === 'array')!.maxItems).to.equal(MAX_RECIPIENTS);
    const check = tools.find((tool) => tool.name === 'check_numbers')!.inputSchema as unknown as {
      properties: { phones: Json };
    };
    expect(check.properties.phones.maxItems).to.equal(MAX_CONTACT_CHECK);
  });

  it('When no token or a wrong one is sent, then the endpoint answers 401 with the contract error and the SDK client cannot connect', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-a-token' }] as Record<string, string>[]) {
      const res = await fetch(`${t.api}/mcp`, {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).to.equal(401);
      expect(await res.json()).to.deep.equal({ success: false, error: ERRORS.invalidToken });
    }
    let refused: unknown;
    await connect(null).catch((err: unknown) => (refused = err));
    expect(String(refused)).to.include(ERRORS.invalidToken);
  });

  it('When get_status is called, then it answers the device status route\u2019s body', async () => {
    const result = await callTool(await connect(), 'get_status');
    expect(result.isError).to.equal(undefined);
    expect(result.structuredContent).to.include({ success: true, status: 'connected', phone: '15550001111' });
  });

  it('When send_message sends a text to one number and to a list, then the messages are queued and readable with get_message and list_messages', async () => {
    const client = await connect();
    const one = await callTool(client, 'send_message', { to: '4915123456789', text: 'hello from MCP' });
    expect(one.isError, JSON.stringify(one)).to.equal(undefined);
    const { messageId } = one.structuredContent as { messageId: string };
    expect(messageId).to.be.a('string');

    const list = await callTool(client, 'send_message', {
      to: ['4915123456780', '4915123456781'],
      text: 'to a list',
    });
    expect(list.isError, JSON.stringify(list)).to.equal(undefined);
    const { messageIds } = list.structuredContent as { messageIds: string[] };
    expect(messageIds).to.have.length(2);

    const read = await callTool(client, 'get_message', { messageId });
    expect(read.isError, JSON.stringify(read)).to.equal(undefined);
    expect((read.structuredContent as { data: Json }).data).to.include({
      messageId,
      to: '4915123456789',
      status: 'queued',
    });

    const page = await callTool(client, 'list_messages', { direction: 'outbound', limit: 10 });
    expect(page.isError, JSON.stringify(page)).to.equal(undefined);
    const ids = (page.structuredContent as { data: { messages: { messageId: string }[] } }).data.messages.map(
      (m) => m.messageId,
    );
    expect(ids).to.include.members([messageId, ...messageIds]);
  });

  it('When check_numbers asks about cached numbers, then it answers the number check route\u2019s results in order', async () => {
    await new ContactCache(t.redis, 3600).putMany(
      deviceId,
      new Map([
        ['4915123456789', { onWhatsApp: true, jid: '4915123456789@s.whatsapp.net' }],
        ['4915123456780', { onWhatsApp: false }],
      ]),
    );
    const result = await callTool(await connect(), 'check_numbers', {
      phones: ['4915123456780', '4915123456789'],
    });
    expect(result.isError, JSON.stringify(result)).to.equal(undefined);
    expect(result.structuredContent).to.deep.equal({
      success: true,
      data: {
        results: [
          { phone: '4915123456780', onWhatsApp: false },
          { phone: '4915123456789', onWhatsApp: true, phoneJid: '4915123456789@s.whatsapp.net' },
        ],
      },
    });
  });

  it('When resolve_username is called, then it answers the username route: the holder\u2019s answer, or its refusal as a tool error', async () => {
    const holder = createRedis(t.config.redis.url, 'subscriber', 'mcp-test-holder');
    try {
      await new DeviceCommandResponder(holder, t.redis).listen(
        async (cmd, reply) => {
          if (cmd.type !== 'account-usernames-resolve' || cmd.deviceId !== deviceId) return;
          const [asked] = cmd.lookups;
          await reply({
            ok: true,
            data: {
              usernames: [
                asked!.pin === '0420'
                  ? { username: asked!.username, status: 'found', lid: '100000000000009@lid' }
                  : { username: asked!.username, status: 'pin_required' },
              ],
            },
          });
        },
        () => undefined,
      );
      const client = await connect();
      const guarded = await callTool(client, 'resolve_username', { username: '@Vault_42' });
      expect(guarded.structuredContent).to.deep.equal({
        success: true,
        data: { username: 'vault_42', status: 'pin_required' },
      });
      const found = await callTool(client, 'resolve_username', { username: 'vault_42', pin: '0420' });
      expect(found.structuredContent).to.deep.equal({
        success: true,
        data: {
          username: 'vault_42',
          status: 'found',
          contact: { lid: '100000000000009@lid', username: 'vault_42' },
        },
      });
      const bad = await callTool(client, 'resolve_username', { username: 'www.vault' });
      expect(bad.isError).to.equal(true);
      expect(jsonOf(bad)).to.include({ status: 400, error: ERRORS.invalidRequest });
    } finally {
      await holder.quit();
    }
  });

  it('When get_status is called past the status rate limit, then the call is a tool error with the contract\u2019s 429 and resetIn', async () => {
    const client = await connect();
    for (let i = 0; i < STATUS_LIMIT; i++)
      expect((await callTool(client, 'get_status')).isError).to.equal(undefined);
    const limited = await callTool(client, 'get_status');
    expect(limited.isError).to.equal(true);
    expect(jsonOf(limited)).to.include({ status: 429, success: false, error: ERRORS.rateLimited });
    expect(jsonOf(limited).resetIn).to.be.within(1, 60);
    // The same token's HTTP calls share the count: the route itself is what refused.
    const http = await fetch(`${t.api}/status`, { headers: { Authorization: `Bearer ${token}` } });
    expect(http.status).to.equal(429);
  });

  it('When the input is bad, then the call is a tool error (the schema\u2019s, or the route\u2019s 400 with its details) and the endpoint keeps serving', async () => {
    const client = await connect();
    const empty = await callTool(client, 'send_message', { to: '4915123456789', text: '' });
    expect(empty.isError).to.equal(true);
    expect((empty.content[0] as { text: string }).text).to.match(/Input validation error/);

    const tooMany = await callTool(client, 'send_message', {
      to: Array.from({ length: MAX_RECIPIENTS + 1 }, (_, i) => `49151234${String(i).padStart(5, '0')}`),
      text: 'x',
    });
    expect(tooMany.isError).to.equal(true);

    const notANumber = await callTool(client, 'send_message', { to: 'not-a-number', text: 'x' });
    expect(notANumber.isError).to.equal(true);
    const body = jsonOf(notANumber);
    expect(body).to.include({ status: 400, success: false, error: ERRORS.invalidRequest });
    expect(body.details).to.be.an('array').that.is.not.empty;

    expect((await callTool(client, 'get_status')).isError).to.equal(undefined);
  });

  it('When a token reads another device\u2019s message, then it is a tool error 404 Message not found, as over HTTP', async () => {
    const sent = await callTool(await connect(), 'send_message', { to: '4915123456789', text: 'mine' });
    const { messageId } = sent.structuredContent as { messageId: string };
    const other = freshDeviceId();
    const otherToken = await createToken(t, { deviceId: other });
    const read = await callTool(await connect(otherToken), 'get_message', { messageId });
    expect(read.isError).to.equal(true);
    expect(jsonOf(read)).to.include({ status: 404, success: false, error: ERRORS.messageNotFound });
  });

  it('When a contact wrote, then list_chats and get_chat_messages answer the chat routes\u2019 bodies; an unknown chat is 404 and a bad id the schema\u2019s error', async () => {
    const from = '4915123456799';
    await t.services.inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      from,
      contact: { phone: from },
      text: 'is anyone there?',
      receivedAt: new Date(),
      waKey: { remoteJid: `${from}@s.whatsapp.net` },
    });
    const client = await connect();
    const chats = await callTool(client, 'list_chats', { limit: 5 });
    expect(chats.isError, JSON.stringify(chats)).to.equal(undefined);
    const [chat] = (chats.structuredContent as { data: { chats: Json[] } }).data.chats;
    expect(chat).to.deep.include({ id: from, unreadCount: 1 });
    expect(chat!.lastMessage).to.include({ direction: 'inbound', text: 'is anyone there?' });

    const page = await callTool(client, 'get_chat_messages', { chatId: from });
    expect(page.isError, JSON.stringify(page)).to.equal(undefined);
    const { messages } = (page.structuredContent as { data: { messages: Json[] } }).data;
    expect(messages.map((m) => [m.direction, m.text])).to.deep.equal([['inbound', 'is anyone there?']]);

    const unknown = await callTool(client, 'get_chat_messages', { chatId: '4915123456700' });
    expect(jsonOf(unknown)).to.deep.equal({ status: 404, success: false, error: CHAT_ERRORS.notFound });
    const bad = await callTool(client, 'mark_chat_read', { chatId: 'not-a-chat' });
    expect(bad.isError).to.equal(true);
    expect((bad.content[0] as { text: string }).text).to.match(/Input validation error/);
    // Another device's token sees none of it.
    const other = await connect(await createToken(t, { deviceId: freshDeviceId() }));
    const theirs = await callTool(other, 'list_chats');
    expect((theirs.structuredContent as { data: { chats: Json[] } }).data.chats).to.deep.equal([]);
  });

  it('When the device is not linked, then send_message is a tool error 409 with the contract\u2019s no-device error', async () => {
    const unlinked = freshDeviceId();
    const result = await callTool(
      await connect(await createToken(t, { deviceId: unlinked })),
      'send_message',
      {
        to: '4915123456789',
        text: 'x',
      },
    );
    expect(result.isError).to.equal(true);
    expect(jsonOf(result)).to.include({ status: 409, error: ERRORS.noDevice });
  });

  it('When GET or DELETE is sent to the stateless endpoint, then it answers 405 naming POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${t.api}/mcp`, { method, headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('POST');
      expect(await res.json()).to.deep.equal({ success: false, error: ERRORS.methodNotAllowed });
    }
  });

  it('When a bare JSON-RPC tools/call is posted (no initialize: the endpoint is stateless, as docs/mcp.md shows with curl), then it is answered as JSON', async () => {
    const res = await fetch(`${t.api}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'get_status', arguments: {} },
      }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).to.equal(null);
    const answer = (await res.json()) as { id: number; result: CallToolResult };
    expect(answer.id).to.equal(7);
    expect(answer.result.structuredContent).to.include({ success: true, status: 'connected' });
  });

  it('When a pool token calls the tools, then send_message and get_message go through the pool and get_status is refused 403, as over HTTP', async () => {
    const devices = [freshDeviceId(), freshDeviceId()];
    for (const d of devices) {
      await markConnected(t.redis, d);
      await markLinked(t.redis, d);
    }
    const poolId = `p${Math.random().toString(36).slice(2, 9)}`;
    await new PoolStore(t.redis).create({ id: poolId, name: 'mcp pool', devices });
    const { value: poolToken } = await t.services.tokens.create({ name: 'pool', poolId });
    const client = await connect(poolToken);
    try {
      const sent = await callTool(client, 'send_message', {
        to: ['4915123456700', '4915123456701'],
        text: 'pool',
      });
      expect(sent.isError, JSON.stringify(sent)).to.equal(undefined);
      const [first] = (sent.structuredContent as { messageIds: string[] }).messageIds;
      const read = await callTool(client, 'get_message', { messageId: first! });
      expect(read.isError, JSON.stringify(read)).to.equal(undefined);
      const status = await callTool(client, 'get_status');
      expect(status.isError).to.equal(true);
      expect(jsonOf(status)).to.include({ status: 403, error: ERRORS.poolTokenNotAllowed });
      const chats = await callTool(client, 'list_chats');
      expect(jsonOf(chats)).to.include({ status: 403, error: ERRORS.poolTokenNotAllowed });
    } finally {
      for (const d of devices) await t.services.acceptor.queue(d).obliterate({ force: true });
    }
  });

  it('When an MCP body is over 1 MB, then it is refused 413 with the contract error before it is read whole', async () => {
    const res = await fetch(`${t.api}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { pad: 'x'.repeat(1024 * 1024) },
      }),
    });
    expect(res.status).to.equal(413);
    expect(await res.json()).to.deep.equal({ success: false, error: ERRORS.mcpBodyTooLarge });
  });
});
