import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { newPlatformMessageId } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { call, markConnected, type TestApi } from '../../../../test/helpers/api.js';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';

type Json = Record<string, unknown>;

/**
 * MCP is no second way into another workspace (docs/security.md "Tenants: the ways a workspace's
 * data could leave"): every tool call is a request to its route, under the device the MCP request
 * named, with the caller's token. Workspace A's tokens naming B's message, batch and chat ids get
 * the answers of ids nobody has; B's device's MCP endpoint refuses them before any tool; and a
 * hostile id (a dot segment, an encoded slash, a query) stays one path segment of the route the
 * tool calls.
 */
describe("MCP: a workspace's tools reach its own device only, whatever ids they are given", () => {
  let t: TestApi;
  const tag = randomBytes(3).toString('hex');
  const [a, b] = [`mcpa${tag}`, `mcpb${tag}`];
  let tokenA: string;
  let deviceA: string;
  let deviceTokenA: string;
  let tokenB: string;
  let deviceB: string;
  /** B's records: a message, a list (its batch), a contact's chat and a group's, an inbound message. */
  const ofB = { message: '', batch: '', inbound: '', chat: '15552610001', group: '120363000000610001@g.us' };
  const clients: Client[] = [];

  async function connect(path: string, token: string): Promise<Client> {
    const client = new Client({ name: 'mcp-isolation', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.api}${path}`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }
  /** A tool's answer; a call the tool's own schema refused, as the MCP error it is. */
  const tool = async (client: Client, name: string, args: Json = {}) => {
    try {
      return (await client.callTool({ name, arguments: args })) as CallToolResult;
    } catch (err) {
      return { refused: String(err) };
    }
  };
  /**
   * The routes the API served from log line `from` on, but the MCP endpoint's own: waited for
   * until the MCP request's own line is written (its tool calls' lines are written before it).
   */
  const routesCalled = async (from: number) => {
    const lines = () => t.logs.slice(from).filter((l) => l.message === 'request');
    await waitFor(() => lines().some((l) => String(l.route).endsWith('/mcp')), {
      timeoutMs: 5000,
      what: "the MCP request's log line",
    });
    return lines()
      .filter((l) => !String(l.route).endsWith('/mcp'))
      .map((l) => `${String(l.method)} ${String(l.route)}`);
  };

  before(async () => {
    t = await startAdminApi();
    for (const id of [a, b])
      expect((await adminCall(t, '/workspaces', { json: { id, name: id } })).status).to.equal(201);
    const mint = async (id: string, json: Json = { name: 'owner' }) =>
      (await adminCall(t, `/workspaces/${id}/tokens`, { json })).body.value as string;
    [tokenA, tokenB] = [await mint(a), await mint(b)];
    const device = async (token: string) =>
      ((await call(`${t.api}/devices`, { method: 'POST', token })).body.data as { deviceId: string })
        .deviceId;
    [deviceA, deviceB] = [await device(tokenA), await device(tokenB)];
    deviceTokenA = await mint(a, { name: 'device', deviceId: deviceA });
    await markConnected(t.redis, deviceA);
    await markConnected(t.redis, deviceB);
    const asB = (json: Json) =>
      call(`${t.api}/devices/${deviceB}/send`, { method: 'POST', token: tokenB, json });
    ofB.message = (await asB({ to: ofB.chat, text: 'B only' })).body.messageId as string;
    ofB.batch = (await asB({ to: [ofB.chat, '15552610002'], text: 'B list' })).body.messageId as string;
    ofB.inbound = (await t.services.inbound.record(deviceB, {
      platformMessageId: newPlatformMessageId(),
      from: ofB.chat,
      contact: { phone: ofB.chat },
      text: "B's contact writes",
      receivedAt: new Date(),
      waKey: { remoteJid: `${ofB.chat}@s.whatsapp.net` },
    })) as string;
    await t.services.inbound.record(deviceB, {
      platformMessageId: newPlatformMessageId(),
      from: '15552610003',
      contact: { phone: '15552610003' },
      chat: { type: 'group', id: ofB.group, subject: "B's group" },
      text: "in B's group",
      receivedAt: new Date(),
      waKey: { remoteJid: ofB.group, participant: '15552610003@s.whatsapp.net' },
    });
    for (const id of [ofB.message, ofB.batch, ofB.inbound]) expect(id).to.be.a('string').and.not.equal('');
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await t.close();
  });

  /** What B's ids are asked through each tool that takes an id, and the same with ids nobody has. */
  const probes = (ids: { message: string; batch: string; inbound: string; chat: string; group: string }) =>
    [
      ['get_message', { messageId: ids.message }],
      ['get_message', { messageId: ids.inbound }],
      ['get_message', { messageId: ids.batch }],
      ['list_messages', { batchId: ids.batch }],
      ['get_chat_messages', { chatId: ids.chat }],
      ['get_chat_messages', { chatId: ids.group }],
      ['mark_chat_read', { chatId: ids.chat }],
      ['mark_chat_read', { chatId: ids.group }],
    ] as const;
  const nobody = {
    message: randomUUID(),
    batch: randomUUID(),
    inbound: randomUUID(),
    chat: '15552619999',
    group: '120363000000619999@g.us',
  };

  it("When A's tokens call the tools with B's message, batch, chat and group ids, then each answers as for ids nobody has, and A's lists hold none of B's", async () => {
    const before = await call(`${t.api}/devices/${deviceB}/messages/${ofB.message}`, { token: tokenB });
    expect(before.status).to.equal(200);
    for (const [who, path, token] of [
      ['workspace token', `/devices/${deviceA}/mcp`, tokenA],
      ['device token', '/mcp', deviceTokenA],
      ['device token naming its device', `/devices/${deviceA}/mcp`, deviceTokenA],
    ] as const) {
      const client = await connect(path, token);
      const theirs = probes(ofB);
      for (const [i, [name, args]] of probes(nobody).entries()) {
        const where = `${name} ${JSON.stringify(theirs[i]![1])} (${who})`;
        const [answer, none] = [await tool(client, name, theirs[i]![1]), await tool(client, name, args)];
        expect(answer, where).to.deep.equal(none);
        if (name !== 'list_messages') expect((answer as CallToolResult).isError, where).to.equal(true);
      }
      for (const name of ['list_messages', 'list_chats']) {
        const page = (await tool(client, name)) as CallToolResult;
        expect(page.isError, `${name} (${who})`).to.equal(undefined);
        const text = JSON.stringify(page.structuredContent);
        for (const id of [ofB.message, ofB.batch, ofB.inbound, ofB.chat, ofB.group, deviceB])
          expect(text, `${name} (${who})`).to.not.include(id);
      }
    }
    const after = await call(`${t.api}/devices/${deviceB}/messages/${ofB.message}`, { token: tokenB });
    expect(after.body).to.deep.equal(before.body);
  });

  it("When A's tokens open MCP for B's device, then 404 Device not found before any tool; B's own token is served there", async () => {
    for (const token of [tokenA, deviceTokenA]) {
      const res = await fetch(`${t.api}/devices/${deviceB}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_message', arguments: { messageId: ofB.message } },
        }),
      });
      expect([res.status, await res.json()]).to.deep.equal([
        404,
        { success: false, error: 'Device not found' },
      ]);
    }
    const own = await tool(await connect(`/devices/${deviceB}/mcp`, tokenB), 'get_message', {
      messageId: ofB.message,
    });
    expect((own as CallToolResult).isError).to.equal(undefined);
  });

  it('When a tool is given a hostile id — a dot segment, an encoded slash, a query, a fragment — then it calls its own route with the id as one segment, answered as an id nobody has', async () => {
    const client = await connect(`/devices/${deviceA}/mcp`, tokenA);
    const none = await tool(client, 'get_message', { messageId: nobody.message });
    // Escaped, each is one segment of GET /messages/{id}: an id nobody has.
    const escaped = [
      `..%2F..%2Fdevices%2F${deviceB}%2Fstatus`,
      '%2e%2e',
      '%2E%2E%2Fstatus',
      `x?token=${tokenB}`,
      `${ofB.message}?token=${tokenB}`,
      `${ofB.message}#x`,
      `;${ofB.message}`,
      `${ofB.message}%00`,
    ];
    for (const messageId of escaped) {
      const from = t.logs.length;
      const answer = await tool(client, 'get_message', { messageId });
      expect(answer, messageId).to.deep.equal(none);
      expect(await routesCalled(from), messageId).to.deep.equal(['GET /api/messenger/v1/messages/:id']);
    }
    // What no path segment can carry — a dot segment, a slash, a backslash, a control character —
    // is no message id: the tool's schema refuses it, naming messageId, and no route is called.
    const unsendable = [
      '.',
      '..',
      '../status',
      '../../..',
      `../../devices/${deviceB}/messages/${ofB.message}`,
      '..\\status',
      `${ofB.message}\u0000`,
    ];
    for (const messageId of unsendable) {
      const from = t.logs.length;
      const answer = await tool(client, 'get_message', { messageId });
      expect(JSON.stringify(answer), messageId).to.match(/messageId/);
      expect(await routesCalled(from), messageId).to.deep.equal([]);
    }
    // A batch id goes in the query: escaped, it is one value of `batchId`, and no token.
    const page = await tool(client, 'list_messages', { batchId: nobody.batch });
    for (const batchId of [`${ofB.batch}&token=${tokenB}`, `x#&token=${tokenB}`, '../batches']) {
      const from = t.logs.length;
      expect(await tool(client, 'list_messages', { batchId }), batchId).to.deep.equal(page);
      expect(await routesCalled(from), batchId).to.deep.equal(['GET /api/messenger/v1/messages']);
    }
    // A chat id has the pattern of one: anything else is refused by the tool, nothing is called.
    for (const chatId of ['..', `../../devices/${deviceB}/chats`, `${ofB.chat}?token=${tokenB}`, '%2e%2e']) {
      for (const name of ['get_chat_messages', 'mark_chat_read']) {
        const from = t.logs.length;
        const answer = await tool(client, name, { chatId });
        const text = JSON.stringify(answer);
        expect(text, `${name} ${chatId}`).to.match(/chatId/);
        expect(await routesCalled(from), `${name} ${chatId}`).to.deep.equal([]);
      }
    }
  });
});
