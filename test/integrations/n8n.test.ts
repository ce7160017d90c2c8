/**
 * Issue 57: the community node package (integrations/n8n) inside real n8n. n8n comes from the npm
 * registry (N8N_VERSION, cached between runs) and runs on Node 24 whichever Node runs mocha; the
 * package is built and packed, and installed in n8n's user folder as n8n installs a community
 * package. The two example workflows of docs/n8n.md (docs/examples/n8n/*.json) are imported with
 * n8n's CLI, as they are, with only the credential's id and the photo's URL filled in, and run
 * against a sandbox stack (api, connection, sender, notifier; the simulator's phones). Then the
 * same nodes with a workspace token (docs/workspaces.md): a credential and a node naming the
 * device (`/devices/{deviceId}/…`), a device of another workspace (404), the credential's test
 * and the reply example on the workspace's device.
 */
import { expect } from 'chai';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { N8nHost, N8N_VERSION, sleep, useStack, waitFor, type N8nRun } from '@mgw/testing';
import { gatewayNode, itemsOf, manualChain, useN8nInstall, type Workflow } from '../support/n8n.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const example = (name: string) =>
  JSON.parse(readFileSync(path.join(ROOT, 'docs/examples/n8n', name), 'utf8')) as Workflow;

const ACCOUNT = '15550570001';
/** The stack's admin token: the operator makes the workspace (docs/workspaces.md). */
const ADMIN_TOKEN = 'n8n-e2e-admin-token-0123456789abcdef';
/** The account linked to the workspace's device, a contact it sends to, and one who writes to it. */
const WORKSPACE_ACCOUNT = '15550570011';
const WORKSPACE_CONTACT = '15550570012';
const WORKSPACE_WRITER = '15550570013';
/** A credential with a workspace token and a Device ID; the workflows that use it. */
const WORKSPACE_CREDENTIAL = { id: 'mgwWorkspaceCred', name: 'Messenger Gateway workspace' };
const WORKSPACE_RUN_ID = 'mgwWorkspaceRun1';
const WORKSPACE_REPLY_ID = 'mgwWorkspaceHi01';
/** The webhook path of the reply example's trigger on the workspace's device. */
const WORKSPACE_WEBHOOK_ID = '5e0b2f7c-9a41-4d3e-8b6f-1c2d3e4f5a60';
/** The example's contacts (docs/examples/n8n/send-text-and-photo.json). */
const CONTACTS = ['15550570002', '15550570003'];
const CREDENTIAL = { id: 'mgwCredential001', name: 'Messenger Gateway account' };
const SEND_ID = 'mgwSendTextPhoto';
const REPLY_ID = 'mgwReplyHiHello1';
const ERRORS_ID = 'mgwRefusedSend01';
/** A 1×1 PNG: what the example's HTTP Request node downloads and the Send photo node sends. */
const PHOTO = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** An example with the test's credential id (and the photo URL) filled in: nothing else changes. */
function fill(workflow: Workflow, id: string, photoUrl?: string): Workflow {
  const filled = structuredClone(workflow);
  filled.id = id;
  for (const node of filled.nodes) {
    if (node.credentials?.messengerGatewayApi) node.credentials.messengerGatewayApi = { ...CREDENTIAL };
    if (node.type === 'n8n-nodes-base.httpRequest') node.parameters.url = photoUrl;
  }
  return filled;
}

/**
 * The reply example on the workspace's device: the workspace's credential (its Device ID names the
 * device) in both nodes, and a webhook path of its own (two active triggers cannot share one).
 */
function onWorkspaceDevice(workflow: Workflow, id: string): Workflow {
  const filled = fill(workflow, id);
  filled.name = `${workflow.name} (workspace)`;
  for (const node of filled.nodes) {
    if (node.credentials?.messengerGatewayApi)
      node.credentials.messengerGatewayApi = { ...WORKSPACE_CREDENTIAL };
    if (node.webhookId) node.webhookId = WORKSPACE_WEBHOOK_ID;
  }
  return filled;
}

describe(`n8n: the Messenger Gateway nodes in a real n8n ${N8N_VERSION} (npm, Node 24) against a sandbox stack`, function () {
  // A test may start n8n (N8nHost.start waits up to 3 min beside the parallel suite) and then wait.
  this.timeout(300_000);
  // First, before the stack starts: n8n and the package, installed and built unless cached.
  const n8n = useN8nInstall();

  const stack = useStack({
    notifier: true,
    env: {
      // the photo server and n8n listen on 127.0.0.1 (sandbox mode allows the webhook; attachments too)
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      WEBHOOK_SWEEP_MS: '500',
      WEBHOOK_RETRY_BASE_MS: '300',
      WEBHOOK_RETRY_MAX_MS: '1000',
      // A shorter rate limit window (60 s by default): the deactivation test waits one out.
      RATE_LIMIT_WINDOW_MS: '30000',
      ADMIN_API_TOKEN: ADMIN_TOKEN,
    },
  });
  /** The workspace: its token, its device linked to WORKSPACE_ACCOUNT, and another never linked. */
  const workspace = { id: `n8n${randomBytes(3).toString('hex')}`, token: '', device: '', other: '' };
  let host: N8nHost;
  let photos: http.Server;
  const reply = example('reply-hi-with-hello.json');
  const trigger = reply.nodes.find((n) => n.type.endsWith('.messengerGatewayTrigger'))!;
  const triggerUrl = () => `${host.url}webhook/${trigger.webhookId}/webhook`;

  before(async function () {
    // Three n8n CLI calls (each bounded by N8nHost.cli's own 3 min): about a minute on a quiet
    // machine, several beside the parallel suite.
    this.timeout(10 * 60_000);
    photos = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PHOTO));
    await new Promise<void>((resolve) => photos.listen(0, '127.0.0.1', resolve));
    const photoUrl = `http://127.0.0.1:${(photos.address() as { port: number }).port}/photo.png`;
    await stack().linkByQr(ACCOUNT, 'n8n Account');
    await makeWorkspace();
    host = await N8nHost.create(n8n());
    await host.importCredentials([
      {
        ...CREDENTIAL,
        type: 'messengerGatewayApi',
        data: { baseUrl: stack().apiUrl, apiToken: stack().token },
      },
      {
        ...WORKSPACE_CREDENTIAL,
        type: 'messengerGatewayApi',
        data: { baseUrl: stack().apiUrl, apiToken: workspace.token, deviceId: workspace.device },
      },
    ]);
    await host.importWorkflows([
      fill(example('send-text-and-photo.json'), SEND_ID, photoUrl),
      fill(reply, REPLY_ID),
      refusedSendWorkflow(),
      workspaceWorkflow(workspace.device, workspace.other, stack().deviceId),
      onWorkspaceDevice(reply, WORKSPACE_REPLY_ID),
    ]);
    await host.publish(REPLY_ID);
    await host.publish(WORKSPACE_REPLY_ID);
  });

  /**
   * The operator makes a workspace and mints its token (admin API); the workspace token makes two
   * devices, and the first is linked to WORKSPACE_ACCOUNT (through a device token the workspace
   * mints for it, as linkByQr takes one).
   */
  async function makeWorkspace(): Promise<void> {
    const ok = <T>(res: { status: number; body: T }, status: number, what: string): T => {
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(status);
      return res.body;
    };
    ok(
      await stack().adminApi(ADMIN_TOKEN, 'POST', '/workspaces', { id: workspace.id, name: 'n8n customer' }),
      201,
      'the workspace',
    );
    workspace.token = ok(
      await stack().adminApi<{ value: string }>(ADMIN_TOKEN, 'POST', `/workspaces/${workspace.id}/tokens`, {
        name: 'n8n',
      }),
      201,
      'its token',
    ).value;
    const newDevice = async () =>
      ok(
        await stack().api<{ data: { deviceId: string } }>('POST', '/devices', undefined, workspace.token),
        201,
        'a device',
      ).data.deviceId;
    workspace.device = await newDevice();
    workspace.other = await newDevice();
    const linker = ok(
      await stack().api<{ data: { value: string } }>(
        'POST',
        '/tokens',
        { name: 'link', deviceId: workspace.device },
        workspace.token,
      ),
      201,
      'a device token',
    ).data.value;
    await stack().linkByQr(WORKSPACE_ACCOUNT, 'n8n Workspace', linker);
  }

  /** The workspace workflow's run: the two tests below read the one run (each `n8n execute` starts n8n's app). */
  let workspaceRun: Promise<N8nRun> | undefined;
  const runWorkspaceWorkflow = () => (workspaceRun ??= host.execute(WORKSPACE_RUN_ID));
  after(async () => {
    await host?.dispose();
    await new Promise((resolve) => (photos ? photos.close(resolve) : resolve(undefined)));
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed' && host) console.error(host.output.slice(-80).join('\n'));
  });

  it('When the manual example runs (n8n execute), then each of the two contacts gets the text and the photo, byte for byte', async () => {
    const run = await host.execute(SEND_ID);
    expect(run.data.resultData.error, JSON.stringify(run.data.resultData.error)).to.equal(undefined);
    for (const node of ['Send text', 'Send photo']) {
      const items = itemsOf(run, node);
      expect(items, node).to.have.length(2);
      for (const item of items) expect(item.json.messageId, node).to.be.a('string');
    }
    const sha = createHash('sha256').update(PHOTO).digest('hex');
    for (const contact of CONTACTS) {
      await waitFor(
        async () => {
          const inbox = await stack().inbox(contact);
          const text = inbox.some((m) => m.text === 'Hello from n8n: your order is on its way.');
          const photo = inbox.some(
            (m) => m.type === 'image' && m.caption === 'Your order' && m.fileSha256 === sha,
          );
          return text && photo;
        },
        { timeoutMs: 30_000, what: `the text and the photo in ${contact}'s inbox` },
      );
    }
  });

  it("When the gateway refuses a send, then the node fails with the gateway's error and its details (and with continueOnFail its item says them)", async () => {
    const run = await host.execute(ERRORS_ID);
    const [continued] = itemsOf(run, 'Refused, continue');
    expect(continued?.json).to.include({ error: 'Invalid request data', httpCode: '400' });
    expect(continued?.json.details).to.match(/^to: .*phone number/);
    const stopped = run.data.resultData.runData['Refused, stop']?.[0]?.error;
    expect(stopped?.message).to.equal('Invalid request data');
    expect(stopped?.description).to.match(/^to: .*phone number/);
    expect(run.data.resultData.error?.message).to.equal('Invalid request data');
  });

  it("When a workspace token's credential names a device, then the node sends from that device, and the node's Device ID (an expression, one device per item) reads each of the workspace's devices", async () => {
    const run = await runWorkspaceWorkflow();
    const [sent] = itemsOf(run, "Send from the credential's device");
    expect(
      sent?.json.messageId,
      JSON.stringify(run.data.resultData.runData["Send from the credential's device"]),
    ).to.be.a('string');
    await waitFor(
      async () =>
        (await stack().inbox(WORKSPACE_CONTACT)).some(
          (m) => m.text === 'Hello from a workspace device' && m.from === WORKSPACE_ACCOUNT,
        ),
      { timeoutMs: 30_000, what: `the workspace device's text in ${WORKSPACE_CONTACT}'s inbox` },
    );
    // The message is the workspace device's: read back on its device's path.
    const record = await stack().api(
      'GET',
      `/devices/${workspace.device}/messages/${String(sent!.json.messageId)}`,
      undefined,
      workspace.token,
    );
    expect(record.status, JSON.stringify(record.body)).to.equal(200);
    // One item per device: the linked one answers with its account, the other is not linked.
    const statuses = itemsOf(run, 'Status of each device').map((item) => item.json);
    expect(statuses.map((s) => [s.status, s.phone])).to.deep.equal([
      ['connected', WORKSPACE_ACCOUNT],
      ['disconnected', undefined],
    ]);
  });

  it("When the node's Device ID names a device the workspace does not own, then the node fails with the gateway's 404 Device not found; an id no device could have fails before any request", async () => {
    const run = await runWorkspaceWorkflow();
    const invalid = itemsOf(run, 'Not a device ID, continue').map((item) => item.json);
    expect(invalid).to.have.length(2);
    // The node's own refusal (no HTTP status): the request was never made.
    for (const item of invalid) {
      expect(item.error).to.match(/^The node's Device ID "Not A Device" is not a device ID/);
      expect(item).to.not.have.property('httpCode');
    }
    const continued = itemsOf(run, "Another workspace's device, continue").map((item) => item.json);
    expect(continued).to.deep.equal([
      { error: 'Device not found', httpCode: '404' },
      { error: 'Device not found', httpCode: '404' },
    ]);
    const stopped = run.data.resultData.runData["Another workspace's device, stop"]?.[0]?.error as
      { message: string; httpCode?: string } | undefined;
    expect(stopped?.message).to.equal('Device not found');
    expect(stopped?.httpCode).to.equal('404');
    expect(run.data.resultData.error?.message).to.equal('Device not found');
  });

  it("When n8n starts with the reply example published, then the trigger has pointed the device's webhook at its URL, for message.received", async () => {
    await host.start();
    let webhook: { url?: string; events?: string[] } = {};
    await waitFor(
      async () => {
        const got = await stack().api<{ data: typeof webhook }>('GET', '/webhook');
        webhook = got.body.data ?? {};
        return webhook.url === triggerUrl();
      },
      // every 2 s: GET /webhook counts against the token's RATE_LIMIT_WEBHOOK (30 a minute), which
      // the trigger's own calls (deactivation below) share
      { timeoutMs: 30_000, intervalMs: 2_000, what: `the device's webhook to be ${triggerUrl()}` },
    );
    expect(webhook.events).to.deep.equal(['message.received']);
  });

  it("When n8n tests the credential (GET /status), then it passes with the stack's token and fails with a made-up one", async () => {
    const test = (data: Record<string, string>) =>
      host.rest<{ data: { status: string; message: string } }>('POST', '/rest/credentials/test', {
        credentials: {
          ...CREDENTIAL,
          type: 'messengerGatewayApi',
          data: { baseUrl: stack().apiUrl, ...data },
        },
      });
    const good = await test({ apiToken: stack().token });
    expect(good.body.data, JSON.stringify(good.body)).to.include({ status: 'OK' });
    const bad = await test({ apiToken: `mgw_${randomBytes(32).toString('base64url')}` });
    expect(bad.body.data?.status, JSON.stringify(bad.body)).to.equal('Error');
    // A workspace token with its device (GET /devices/{id}/status); a device token naming its own.
    const passes: Array<[string, Record<string, string>]> = [
      ['a workspace token with its device', { apiToken: workspace.token, deviceId: workspace.device }],
      [
        'a workspace token with its unlinked device',
        { apiToken: workspace.token, deviceId: workspace.other },
      ],
      ['a device token naming its own device', { apiToken: stack().token, deviceId: stack().deviceId }],
    ];
    // Without a device (400), with another workspace's (404), with an id no device could have (404).
    const fails: Array<[string, Record<string, string>]> = [
      ['a workspace token without a device', { apiToken: workspace.token }],
      ["a workspace token with another's device", { apiToken: workspace.token, deviceId: stack().deviceId }],
      ['a workspace token with no device id', { apiToken: workspace.token, deviceId: 'Not A Device' }],
      ["a device token naming another's device", { apiToken: stack().token, deviceId: workspace.device }],
    ];
    for (const [what, data] of passes) {
      const res = await test(data);
      expect(res.body.data?.status, `${what}: ${JSON.stringify(res.body)}`).to.equal('OK');
    }
    for (const [what, data] of fails) {
      const res = await test(data);
      expect(res.body.data?.status, `${what}: ${JSON.stringify(res.body)}`).to.equal('Error');
    }
  });

  it('When a contact writes "hi", then n8n answers "hello" to it; a contact writing something else gets nothing', async () => {
    await stack().simApi('POST', '/contacts/15550570005/send', { to: ACCOUNT, text: 'good morning' });
    await stack().simApi('POST', '/contacts/15550570004/send', { to: ACCOUNT, text: 'Hi' });
    await waitFor(async () => (await stack().inbox('15550570004')).some((m) => m.text === 'hello'), {
      timeoutMs: 30_000,
      what: "n8n's hello in 15550570004's inbox",
    });
    // The device's events go out in order: the other contact's went first, and ran its branch.
    expect((await executionsOf(host, REPLY_ID)).length).to.be.at.least(2);
    expect(await stack().inbox('15550570005')).to.deep.equal([]);
  });

  it('When a contact writes "hi" to the workspace\u2019s device, then the reply example on the workspace\u2019s credential answers "hello" from that device', async () => {
    const webhook = await stack().api<{ data: { url?: string } }>(
      'GET',
      `/devices/${workspace.device}/webhook`,
      undefined,
      workspace.token,
    );
    expect(webhook.body.data?.url, JSON.stringify(webhook.body)).to.equal(
      `${host.url}webhook/${WORKSPACE_WEBHOOK_ID}/webhook`,
    );
    await stack().simApi('POST', `/contacts/${WORKSPACE_WRITER}/send`, { to: WORKSPACE_ACCOUNT, text: 'hi' });
    await waitFor(
      async () =>
        (await stack().inbox(WORKSPACE_WRITER)).some(
          (m) => m.text === 'hello' && m.from === WORKSPACE_ACCOUNT,
        ),
      { timeoutMs: 30_000, what: `n8n's hello from the workspace device in ${WORKSPACE_WRITER}'s inbox` },
    );
    expect((await executionsOf(host, WORKSPACE_REPLY_ID)).length).to.be.at.least(1);
  });

  it("When a request without a valid signature reaches the trigger's URL, then it is answered 401 and runs nothing", async () => {
    const before = await executionsOf(host, REPLY_ID);
    const body = JSON.stringify({
      type: 'message.received',
      timestamp: new Date().toISOString(),
      data: { deviceId: stack().deviceId, messageId: 'forged', from: '15550570006', text: 'hi' },
    });
    const id = `forged-${Date.now()}`;
    const now = String(Math.floor(Date.now() / 1000));
    const otherSecret = randomBytes(32);
    const signed = (secret: Buffer, ts: string) =>
      `v1,${createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64')}`;
    const forgeries: Array<[string, Record<string, string>]> = [
      ['no signature headers', {}],
      ['a made-up signature', { 'webhook-id': id, 'webhook-timestamp': now, 'webhook-signature': 'v1,AAAA' }],
      [
        'a signature by another secret',
        { 'webhook-id': id, 'webhook-timestamp': now, 'webhook-signature': signed(otherSecret, now) },
      ],
      [
        'a timestamp an hour old',
        { 'webhook-id': id, 'webhook-timestamp': String(Number(now) - 3600), 'webhook-signature': 'v1,AAAA' },
      ],
    ];
    for (const [what, headers] of forgeries) {
      const res = await fetch(triggerUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      expect(res.status, what).to.equal(401);
    }
    await sleep(2_000); // a run would have answered within this (the real "hi" took well under it)
    expect(await executionsOf(host, REPLY_ID)).to.deep.equal(before);
    expect(await stack().inbox('15550570006')).to.deep.equal([]);
  });

  it("When the workflow is deactivated while the token's webhook rate limit is spent, then the trigger waits it out and removes the device's webhook", async () => {
    // The API's request log (one JSON line per request): what the trigger's calls were answered.
    const answered = (method: string, ok: (status: number) => boolean) =>
      stack()
        .processes.filter((p) => p.name.startsWith('api'))
        .flatMap((p) => p.output)
        .filter((line) => line.includes('"route":"/api/messenger/v1/webhook"'))
        .map((line) => JSON.parse(line) as { method: string; status: number })
        .filter((r) => r.method === method && ok(r.status)).length;
    const limitedBefore = answered('GET', (s) => s === 429);
    // Spend the token's RATE_LIMIT_WEBHOOK (30 per window) up to its first refusal.
    let spent = false;
    for (let i = 0; i < 40 && !spent; i++) spent = (await stack().api('GET', '/webhook')).status === 429;
    expect(spent, 'the webhook rate limit was reached').to.equal(true);

    const res = await host.rest('POST', `/rest/workflows/${REPLY_ID}/deactivate`, {});
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).to.equal(200);
    // Watched in the log, not by polling the API (which would spend the budget the trigger waits for).
    await waitFor(() => answered('DELETE', (s) => s < 300) === 1, {
      timeoutMs: 90_000,
      intervalMs: 500,
      what: "the trigger's DELETE /webhook to succeed",
    });
    expect(
      answered('GET', (s) => s === 429) - limitedBefore,
      "the trigger's own GET was refused first",
    ).to.be.greaterThan(1);
    expect((await stack().api('GET', '/webhook')).status).to.equal(404);
  });
});

/** The ids of a workflow's executions, through n8n's REST API. */
async function executionsOf(host: N8nHost, workflowId: string): Promise<string[]> {
  const filter = encodeURIComponent(JSON.stringify({ workflowId }));
  const res = await host.rest<{ data: { results: Array<{ id: string }> } }>(
    'GET',
    `/rest/executions?filter=${filter}`,
  );
  if (res.status !== 200) throw new Error(`GET /rest/executions answered ${res.status}`);
  return res.body.data.results.map((e) => e.id).sort();
}

/**
 * A workflow on the workspace's credential (its Device ID: `device`): a text sent from the
 * credential's device; one Get Status per device of the workspace, the node's Device ID an
 * expression over the items (`device`, then `other`); then Get Status on an id no device could
 * have (with continueOnFail) and on `foreign`, a device of another workspace (with continueOnFail,
 * and without: the run fails there).
 */
function workspaceWorkflow(device: string, other: string, foreign: string): Workflow {
  const gateway = (name: string, parameters: Record<string, unknown>, onError?: string) =>
    gatewayNode(name, parameters, WORKSPACE_CREDENTIAL, onError);
  const status = (deviceId: string) => ({ resource: 'connection', operation: 'getStatus', deviceId });
  return manualChain(
    WORKSPACE_RUN_ID,
    'Workspace devices',
    (n) => `9d3f1b7e-2c4a-4e8b-a6d1-0f5e3c7b9a${String(n).padStart(2, '0')}`,
    [
      gateway("Send from the credential's device", {
        resource: 'message',
        operation: 'sendText',
        to: WORKSPACE_CONTACT,
        text: 'Hello from a workspace device',
        options: {},
      }),
      {
        name: 'Devices',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        parameters: { mode: 'raw', jsonOutput: JSON.stringify({ devices: [device, other] }), options: {} },
      },
      {
        name: 'One item per device',
        type: 'n8n-nodes-base.splitOut',
        typeVersion: 1,
        parameters: { fieldToSplitOut: 'devices', options: {} },
      },
      gateway('Status of each device', status('={{ $json.devices }}')),
      gateway('Not a device ID, continue', status('Not A Device'), 'continueRegularOutput'),
      gateway("Another workspace's device, continue", status(foreign), 'continueRegularOutput'),
      gateway("Another workspace's device, stop", status(foreign)),
    ],
  );
}

/** A send the gateway refuses (`to` is no phone number), once with continueOnFail and once without. */
function refusedSendWorkflow(): Workflow {
  const send = (name: string, onError?: string) =>
    gatewayNode(
      name,
      { resource: 'message', operation: 'sendText', to: '123', text: 'never sent', options: {} },
      CREDENTIAL,
      onError,
    );
  return manualChain(ERRORS_ID, 'Refused sends', (n) => `0c4e8a1f-3b6d-4f2a-9e7c-5d1b8a2f6c${n}0`, [
    send('Refused, continue', 'continueRegularOutput'),
    send('Refused, stop'),
  ]);
}
