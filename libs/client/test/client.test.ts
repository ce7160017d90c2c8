import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { useSharedStack, waitFor } from '@mgw/testing';
import { createGatewayClient, type GatewayClient } from '@mgw/client';
import { readFile } from 'node:fs/promises';
import { REPO_ROOT, SCHEMA_FILE, typesOf, withoutComments } from '../scripts/schema-source.js';

/**
 * The typed client against the running gateway (the API, connection and sender services as
 * processes on a real Redis, a device linked through the simulator): status, a text to one and to
 * a list (delivered to the simulator's inboxes), a message read back, errors answered as
 * `{ ok: false, status, error: { success: false, error } }`; and the document the gateway serves
 * generates the committed types (its descriptions aside, which carry this stack's rate limits).
 */
describe('@mgw/client against the running gateway', function () {
  this.timeout(120_000);
  const stack = useSharedStack();
  const account = '15550200001';
  const contacts = ['15550200002', '15550200003', '15550200004'];
  let client: GatewayClient;

  before(async () => {
    await stack().linkByQr(account, 'Client Test');
    await stack().waitForStatus('connected');
    client = createGatewayClient({ baseUrl: stack().apiUrl, token: stack().token });
  });

  it('When the gateway\u2019s served document is turned into types, then they equal the committed ones', async () => {
    const res = await fetch(`${stack().apiUrl}/api/messenger/v1/openapi.json`);
    expect(res.status).to.equal(200);
    const served = withoutComments(await typesOf((await res.json()) as Record<string, unknown>));
    expect(served).to.equal(withoutComments(await readFile(SCHEMA_FILE, 'utf8')));
  });

  it('When status() is called, then it is typed and says connected with the account', async () => {
    const status = await client.status();
    if (!status.ok) throw new Error(`status failed: ${status.error.error}`);
    expect(status.data.success).to.equal(true);
    expect(status.data.status).to.equal('connected');
    expect(status.data.phone).to.equal(account);
  });

  it('When a text is sent to one number and to a list, then each lands in its inbox and getMessage reads it', async () => {
    const text = `typed hello ${randomUUID()}`;
    const one = await client.sendText(contacts[0]!, text);
    if (!one.ok) throw new Error(`send failed: ${JSON.stringify(one.error)}`);
    expect(one.status).to.equal(202);
    const listText = `typed list ${randomUUID()}`;
    const list = await client.send({ to: contacts.slice(1), text: listText });
    if (!list.ok) throw new Error(`list send failed: ${JSON.stringify(list.error)}`);
    expect(list.data.messageIds).to.have.length(2);

    for (const [id, to, expected] of [
      [one.data.messageId, contacts[0]!, text],
      [list.data.messageIds![0]!, contacts[1]!, listText],
      [list.data.messageIds![1]!, contacts[2]!, listText],
    ] as const) {
      await waitFor(
        async () => {
          const read = await client.getMessage(id);
          return read.ok && ['sent', 'delivered', 'read'].includes(read.data.data.status as string);
        },
        { timeoutMs: 30_000, what: `message ${id} sent` },
      );
      const inbox = await stack().inbox(to);
      expect(inbox.filter((m) => m.text === expected)).to.have.length(1);
    }
    const read = await client.getMessage(one.data.messageId);
    if (!read.ok) throw new Error(read.error.error);
    expect(read.data.data).to.include({ messageId: one.data.messageId, to: contacts[0] });

    // The typed openapi-fetch client underneath is there too.
    const page = await client.api.GET('/api/messenger/v1/messages', { params: { query: { limit: 5 } } });
    expect(page.response.status).to.equal(200);
    expect(page.data!.data.messages.map((m) => m.messageId)).to.include(one.data.messageId);
  });

  it('When the API refuses, then the answer is typed as { success: false, error } with its status', async () => {
    const missing = await client.getMessage('no-such-message');
    expect(missing).to.deep.equal({
      ok: false,
      status: 404,
      error: { success: false, error: 'Message not found' },
    });

    const invalid = await client.send({ to: 'not-a-number', text: 'x' });
    expect(invalid.ok).to.equal(false);
    if (invalid.ok) return;
    expect(invalid.status).to.equal(400);
    expect(invalid.error.error).to.equal('Invalid request data');
    expect(invalid.error.details?.[0]?.path).to.deep.equal(['to']);

    const stranger = createGatewayClient({ baseUrl: stack().apiUrl, token: 'not-a-token' });
    expect(await stranger.status()).to.deep.equal({
      ok: false,
      status: 401,
      error: { success: false, error: 'Invalid API token' },
    });
  });

  it('When the example runs against the gateway, then it sends to a list and prints each message sent', async () => {
    const to = ['15550200005', '15550200006'];
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', 'libs/client/examples/send.ts'],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          GW_URL: stack().apiUrl,
          TOKEN: stack().token,
          TO: to.join(','),
          TEXT: 'from the example',
        },
        timeout: 60_000,
      },
    );
    expect(stdout).to.include(`device: connected (${account})`);
    expect(stdout).to.match(/^list: [0-9a-f-]{36} \(batch id\), 2 message\(s\)$/m);
    expect(stdout.match(/: (sent|delivered|read)$/gm)).to.have.length(2);
    for (const phone of to)
      expect((await stack().inbox(phone)).filter((m) => m.text === 'from the example')).to.have.length(1);
  });

  it('When the example sends a list of one to a number not on WhatsApp, with only PORT set, then it prints the batch id, the message id and why it failed', async () => {
    const phone = '15550200007';
    await stack().simApi('POST', '/contacts', { phone, onWhatsApp: false });
    const ran = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--conditions=development', '--import', 'tsx', 'libs/client/examples/send.ts'],
        {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            PORT: new URL(stack().apiUrl).port,
            TOKEN: stack().token,
            TO: phone,
            LIST: '1',
          },
          timeout: 60_000,
        },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(ran.code, ran.stderr).to.equal(1);
    const [, batchId] = /^list: (\S+) \(batch id\), 1 message\(s\)$/m.exec(ran.stdout) ?? [];
    const [, messageId] = new RegExp(`^  ${phone}: (\\S+)$`, 'm').exec(ran.stdout) ?? [];
    expect(batchId, ran.stdout).to.be.a('string');
    expect(messageId, ran.stdout).to.be.a('string').and.not.equal(batchId);
    expect(ran.stdout).to.include(`${messageId} (${phone}): failed: not_on_whatsapp`);
  });
});
