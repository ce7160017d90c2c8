import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ERRORS } from '@mgw/contracts';
import { SANDBOX_NUMBER } from '@mgw/cloud-sim';
import { useStack, waitFor } from '@mgw/testing';

type Json = Record<string, unknown>;

/**
 * The MCP endpoint of the running gateway (API, connection and sender services as processes, a
 * real Redis, a device linked through the simulator), driven by the SDK's own client: a status, a
 * text to one number and to a list that land in the simulator's inboxes, a number check answered
 * by the sender that holds the device, messages read back, a contact's chat read and marked read
 * (the contact sees the receipts), and the send rate limit as a tool error.
 */
describe('e2e: the MCP endpoint with the SDK client (real services, simulator)', function () {
  this.timeout(120_000);
  const SEND_LIMIT = 4;
  const stack = useStack({ cloud: true, env: { RATE_LIMIT_SEND: String(SEND_LIMIT) } });
  const account = '15550300001';
  const contacts = ['15550300002', '15550300003', '15550300004'];
  const offWhatsApp = '15550300009';
  let client: Client;

  const callTool = async (name: string, args: Json = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const bodyOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text) as Json;

  before(async () => {
    await stack().linkByQr(account, 'MCP Test');
    await stack().waitForStatus('connected');
    await stack().simApi('POST', '/contacts', { phone: offWhatsApp, onWhatsApp: false });
    client = new Client({ name: 'mcp-e2e', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack().apiUrl}/api/messenger/v1/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${stack().token}` } },
      }),
    );
  });
  after(async () => client?.close());

  it('When get_status is called, then the linked account is connected', async () => {
    const status = await callTool('get_status');
    expect(status.isError, JSON.stringify(status)).to.equal(undefined);
    expect(status.structuredContent).to.include({ success: true, status: 'connected', phone: account });
  });

  it('When send_message sends to one number and to a list, then each text lands in its inbox and get_message follows it', async () => {
    const one = await callTool('send_message', { to: contacts[0], text: 'mcp one' });
    expect(one.isError, JSON.stringify(one)).to.equal(undefined);
    const list = await callTool('send_message', { to: contacts.slice(1), text: 'mcp list' });
    expect(list.isError, JSON.stringify(list)).to.equal(undefined);
    const ids = [
      (one.structuredContent as { messageId: string }).messageId,
      ...(list.structuredContent as { messageIds: string[] }).messageIds,
    ];
    for (const [i, id] of ids.entries()) {
      await waitFor(
        async () => {
          const read = await callTool('get_message', { messageId: id });
          const status = (read.structuredContent as { data?: { status: string } }).data?.status;
          return status !== undefined && ['sent', 'delivered', 'read'].includes(status);
        },
        { timeoutMs: 30_000, what: `message ${id} sent` },
      );
      const inbox = await stack().inbox(contacts[i]!);
      expect(inbox.filter((m) => m.text === (i === 0 ? 'mcp one' : 'mcp list'))).to.have.length(1);
    }
    const page = await callTool('list_messages', { direction: 'outbound' });
    const listed = (page.structuredContent as { data: { messages: { messageId: string }[] } }).data.messages;
    expect(listed.map((m) => m.messageId)).to.include.members(ids);
  });

  it('When check_numbers asks about a number on WhatsApp and one not, then the device\u2019s holder answers each', async () => {
    const result = await callTool('check_numbers', { phones: [contacts[0], offWhatsApp] });
    expect(result.isError, JSON.stringify(result)).to.equal(undefined);
    const { results } = (result.structuredContent as { data: { results: Json[] } }).data;
    expect(results.map((r) => [r.phone, r.onWhatsApp])).to.deep.equal([
      [contacts[0], true],
      [offWhatsApp, false],
    ]);
  });

  it('When a contact writes, then list_chats shows the chat unread, get_chat_messages reads it, and mark_chat_read sends the contact its read receipts', async () => {
    const writer = contacts[2]!;
    const sent = await stack().simApi<{ id: string }>('POST', `/contacts/${writer}/send`, {
      to: account,
      text: 'Can an agent read this?',
    });
    expect(sent.id).to.be.a('string');
    type Chat = { id: string; unreadCount: number; lastMessage: { direction: string; text?: string } };
    let chat: Chat | undefined;
    await waitFor(
      async () => {
        const list = await callTool('list_chats', { limit: 20 });
        chat = (list.structuredContent as { data: { chats: Chat[] } }).data.chats.find(
          (c) => c.id === writer,
        );
        return chat?.lastMessage.direction === 'inbound';
      },
      { timeoutMs: 20_000, what: 'the contact’s chat listed with its message' },
    );
    expect(chat).to.deep.include({ unreadCount: 1 });
    expect(chat!.lastMessage.text).to.equal('Can an agent read this?');

    const page = await callTool('get_chat_messages', { chatId: writer, limit: 5 });
    expect(page.isError, JSON.stringify(page)).to.equal(undefined);
    const messages = (page.structuredContent as { data: { messages: Json[] } }).data.messages;
    expect(messages.map((m) => [m.direction, m.text])).to.deep.include([
      'inbound',
      'Can an agent read this?',
    ]);

    const read = await callTool('mark_chat_read', { chatId: writer });
    expect(read.isError, JSON.stringify(read)).to.equal(undefined);
    expect((read.structuredContent as { data: Json }).data).to.include({ chatId: writer, unreadCount: 0 });
    await waitFor(
      async () =>
        (
          await stack().simApi<{ receipts: { type: string }[] }>('GET', `/contacts/${writer}/read-receipts`)
        ).receipts.some((r) => r.type === 'read'),
      { timeoutMs: 20_000, what: 'the contact sees the read receipt' },
    );

    const unknown = await callTool('get_chat_messages', { chatId: '15550309999' });
    expect(unknown.isError).to.equal(true);
    expect(bodyOf(unknown)).to.deep.equal({ status: 404, success: false, error: 'Chat not found' });
  });

  it('When a Cloud API device lists its templates and sends one, then list_templates names what send_template must give, and the template reaches the Graph API; a linked device has none', async () => {
    const cloudToken = await stack().createToken(`mcp-cloud-${Math.random().toString(36).slice(2, 7)}`);
    await stack().configureSandboxCloud(cloudToken);
    const cloudClient = new Client({ name: 'mcp-e2e-cloud', version: '1' });
    await cloudClient.connect(
      new StreamableHTTPClientTransport(new URL(`${stack().apiUrl}/api/messenger/v1/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${cloudToken}` } },
      }),
    );
    try {
      const cloudTool = async (name: string, args: Json = {}) =>
        (await cloudClient.callTool({ name, arguments: args })) as CallToolResult;
      const listed = await cloudTool('list_templates', { name: 'order_update' });
      expect(listed.isError, JSON.stringify(listed)).to.equal(undefined);
      const templates = (listed.structuredContent as { data: { templates: Json[] } }).data.templates;
      expect(templates).to.have.length(1);
      expect(templates[0]).to.deep.include({
        name: 'order_update',
        language: 'en_US',
        status: 'APPROVED',
        parameters: { body: 1 },
      });
      expect((await stack().api('POST', '/connect', undefined, cloudToken)).body).to.deep.include({
        status: 'connected',
      });
      expect((await cloudTool('get_status')).structuredContent).to.include({
        status: 'connected',
        engine: 'cloud',
      });

      const to = '15550300021';
      const sent = await cloudTool('send_template', {
        to,
        name: 'order_update',
        language: 'en_US',
        components: [{ type: 'body', parameters: [{ type: 'text', text: '#77' }] }],
      });
      expect(sent.isError, JSON.stringify(sent)).to.equal(undefined);
      await waitFor(
        () =>
          stack()
            .cloud.sent(SANDBOX_NUMBER.id)
            .some((m) => m.waId === to),
        {
          what: 'the template at the Graph API',
        },
      );
      const [graph] = stack()
        .cloud.sent(SANDBOX_NUMBER.id)
        .filter((m) => m.waId === to);
      expect(graph!.type).to.equal('template');
      expect(JSON.stringify(graph!.request)).to.contain('#77');
    } finally {
      await cloudClient.close();
    }

    const linked = await callTool('list_templates');
    expect(linked.isError).to.equal(true);
    expect(bodyOf(linked)).to.include({ status: 404, success: false });
  });

  it('When sends pass the token\u2019s send rate limit, then send_message is a tool error with the contract\u2019s 429 and resetIn', async () => {
    // Two /send calls so far this window; the limit is SEND_LIMIT per window.
    let limited: CallToolResult | undefined;
    for (let i = 0; i < SEND_LIMIT && !limited; i++) {
      const r = await callTool('send_message', { to: contacts[0], text: `over ${i}` });
      if (r.isError) limited = r;
    }
    expect(limited, 'no send was refused').to.not.equal(undefined);
    expect(bodyOf(limited!)).to.include({ status: 429, success: false, error: ERRORS.rateLimited });
    expect(bodyOf(limited!).resetIn).to.be.a('number');
  });
});
