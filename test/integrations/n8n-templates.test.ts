/**
 * Issue 83: the n8n node's Send Template inside a real n8n (from npm, as n8n.test.ts installs it)
 * against a stack with the Cloud API simulator: a device configured as the sandbox's Cloud API
 * number, a template of its WABA with an image header, two body placeholders and three buttons,
 * and one workflow run with `n8n execute` — the template from the fields (filled by expressions
 * from the item), the sandbox's order_update as raw components to a list, a template the WABA
 * does not have (the gateway's 422), and a parameter the node refuses itself. What reached Meta is
 * read from the simulator. The fields' parsing and the lists are test/fast/integrations/n8n-template.test.ts.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { SANDBOX_NUMBER } from '@mgw/cloud-sim';
import { N8nHost, N8N_VERSION, useStack, waitFor, type N8nRun } from '@mgw/testing';
import { ORDER_READY_COMPONENTS, ORDER_READY_PHOTO as PHOTO } from '../support/n8n-templates.js';
import { gatewayNode, itemsOf, manualChain, useN8nInstall, type Workflow } from '../support/n8n.js';

const CREDENTIAL = { id: 'mgwCloudCred0001', name: 'Messenger Gateway cloud device' };
const WORKFLOW_ID = 'mgwSendTemplate1';
/** The contact the fields' template goes to; the two of the JSON one's list. */
const CUSTOMER = '15550980001';
const LIST = ['15550980002', '15550980003'];

/** A template of the sandbox's WABA with a parameter in each place the fields fill. */
const ORDER_READY = {
  wabaId: SANDBOX_NUMBER.wabaId,
  name: 'n8n_order_ready',
  language: 'en_US',
  category: 'UTILITY' as const,
  components: [
    { type: 'HEADER', format: 'IMAGE', example: { header_handle: [PHOTO] } },
    {
      type: 'BODY',
      text: 'Hello {{1}}, your order {{2}} is ready.',
      example: { body_text: [['Ada', '#1234']] },
    },
    {
      type: 'BUTTONS',
      buttons: [
        {
          type: 'URL',
          text: 'Track it',
          url: 'https://shop.example/track/{{1}}',
          example: ['https://shop.example/track/1234'],
        },
        { type: 'QUICK_REPLY', text: 'Thanks' },
        { type: 'COPY_CODE', example: 'SAVE10' },
      ],
    },
  ],
};

describe(`n8n: the Messenger Gateway node sends WhatsApp templates in a real n8n ${N8N_VERSION} to a Cloud API device (the Cloud API simulator)`, function () {
  this.timeout(300_000);
  // First, before the stack starts: n8n and the package, installed and built unless cached.
  const n8n = useN8nInstall();

  const stack = useStack({ cloud: true });
  let host: N8nHost;
  let run: N8nRun;
  /** The cloud device's token (what the workflow's credential holds). */
  let token: string;

  before(async function () {
    // Two n8n CLI calls and the run (each bounded by N8nHost.cli's own 3 min).
    this.timeout(10 * 60_000);
    const deviceId = `n8n-cloud-${randomBytes(3).toString('hex')}`;
    token = await stack().createToken(deviceId);
    await stack().configureSandboxCloud(token);
    const connected = await stack().api('POST', '/connect', undefined, token);
    expect(connected.body, JSON.stringify(connected.body)).to.deep.include({ status: 'connected' });
    stack().cloud.addTemplate(ORDER_READY);
    host = await N8nHost.create(n8n());
    await host.importCredentials([
      { ...CREDENTIAL, type: 'messengerGatewayApi', data: { baseUrl: stack().apiUrl, apiToken: token } },
    ]);
    await host.importWorkflows([templateWorkflow()]);
    run = await host.execute(WORKFLOW_ID);
  });
  after(async () => {
    await host?.dispose();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed' && run)
      console.error(JSON.stringify(run.data.resultData, null, 1).slice(0, 8000));
  });

  /** What the simulator's Graph API was asked to send to `to`. */
  const sentTo = (to: string) =>
    stack()
      .cloud.sent(SANDBOX_NUMBER.id)
      .filter((m) => m.waId === to);

  it('When the template’s header, body and buttons are the node’s fields (expressions over the item), then Meta gets exactly that template with those parameters, once', async () => {
    const [item] = itemsOf(run, 'Send order ready');
    expect(item?.json.messageId, JSON.stringify(itemsOf(run, 'Send order ready'))).to.be.a('string');
    await waitFor(() => sentTo(CUSTOMER).length > 0, {
      timeoutMs: 60_000,
      what: `the template to ${CUSTOMER}`,
    });
    const sent = sentTo(CUSTOMER);
    expect(sent.map((m) => m.type)).to.deep.equal(['template']);
    expect(sent[0]!.request.template).to.deep.equal({
      name: 'n8n_order_ready',
      language: { code: 'en_US' },
      components: ORDER_READY_COMPONENTS,
    });
    // The node's message is the one Meta got: its record holds the wamid, and the template as the node sent it.
    let record: { template?: { components?: unknown[] }; platformMessageId?: string } = {};
    await waitFor(
      async () => {
        const got = await stack().api<{ data: typeof record }>(
          'GET',
          `/messages/${String(item!.json.messageId)}`,
          undefined,
          token,
        );
        record = got.body.data ?? {};
        return record.platformMessageId !== undefined;
      },
      { timeoutMs: 30_000, what: "the message's wamid on its record" },
    );
    expect(record.platformMessageId).to.equal(sent[0]!.id);
    expect(record.template).to.deep.equal({
      name: 'n8n_order_ready',
      language: 'en_US',
      components: ORDER_READY_COMPONENTS,
    });
  });

  it('When the components are raw JSON and two recipients are listed, then each gets the template once, and the node answers the batch', async () => {
    const [item] = itemsOf(run, 'Send order update to a list');
    expect(item?.json.batchId, JSON.stringify(item?.json)).to.be.a('string');
    expect(item?.json.messageIds).to.have.length(2);
    await waitFor(() => LIST.every((to) => sentTo(to).length > 0), {
      timeoutMs: 60_000,
      what: 'the template to the list',
    });
    for (const to of LIST) {
      expect(
        sentTo(to).map((m) => m.request.template),
        to,
      ).to.deep.equal([
        {
          name: 'order_update',
          language: { code: 'en_US' },
          components: [{ type: 'body', parameters: [{ type: 'text', text: '#1234' }] }],
        },
      ]);
    }
  });

  it('When the template is not in the WABA, then the node has the gateway’s 422 and its details; a parameter with a line break is refused by the node before any request', () => {
    expect(itemsOf(run, 'No such template, continue').map((i) => i.json)).to.deep.equal([
      {
        error: 'Template not found',
        details:
          'template: No template "no_such_template" (en_US) in the number\'s WhatsApp Business Account',
        httpCode: '422',
      },
    ]);
    const [refused] = itemsOf(run, 'Line break, continue').map((i) => i.json);
    expect(refused).to.deep.equal({
      error:
        'Body Parameter 1 has a line break, a tab or another control character: WhatsApp refuses them (error 132018)',
    });
    expect(sentTo('15550980009')).to.deep.equal([]);
    expect(run.data.resultData.error, JSON.stringify(run.data.resultData.error)).to.equal(undefined);
  });
});

/**
 * Run → Order (the item: a customer, an order) → the order_ready template from the fields → the
 * sandbox's order_update as raw JSON to a list → a template the WABA lacks, and a body parameter
 * with a line break (both with continueOnFail, to 15550980009).
 */
function templateWorkflow(): Workflow {
  const send = (name: string, parameters: Record<string, unknown>, onError?: string) =>
    gatewayNode(name, { resource: 'message', operation: 'sendTemplate', ...parameters }, CREDENTIAL, onError);
  const locator = (mode: string, value: string) => ({ __rl: true, mode, value });
  return manualChain(
    WORKFLOW_ID,
    'Send templates',
    (n) => `6b1e2d3c-4f5a-4b6c-8d7e-9f0a1b2c3d${String(n).padStart(2, '0')}`,
    [
      {
        name: 'Order',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        parameters: {
          mode: 'raw',
          jsonOutput: JSON.stringify({ phone: CUSTOMER, firstName: 'Ada', order: '1234', coupon: 'SAVE10' }),
          options: {},
        },
      },
      send('Send order ready', {
        to: '={{ $json.phone }}',
        // Picked from the list, as the editor saves it.
        templateName: locator('list', 'n8n_order_ready'),
        templateLanguage: locator('list', 'en_US'),
        parametersMode: 'fields',
        headerType: 'image',
        headerMedia: PHOTO,
        bodyParameters: { parameter: [{ text: '={{ $json.firstName }}' }, { text: '=#{{ $json.order }}' }] },
        buttonParameters: {
          button: [
            { index: 0, type: 'url', value: '={{ $json.order }}' },
            { index: 1, type: 'quick_reply', value: '=thanks-{{ $json.order }}' },
            { index: 2, type: 'copy_code', value: '={{ $json.coupon }}' },
          ],
        },
        options: {},
      }),
      send('Send order update to a list', {
        to: LIST.join(', '),
        // Typed in.
        templateName: locator('name', 'order_update'),
        templateLanguage: locator('code', 'en_US'),
        parametersMode: 'json',
        componentsJson: JSON.stringify([{ type: 'body', parameters: [{ type: 'text', text: '#1234' }] }]),
        options: {},
      }),
      send(
        'No such template, continue',
        {
          to: '15550980009',
          templateName: locator('name', 'no_such_template'),
          templateLanguage: locator('code', 'en_US'),
          options: {},
        },
        'continueRegularOutput',
      ),
      send(
        'Line break, continue',
        {
          to: '15550980009',
          templateName: locator('name', 'order_update'),
          templateLanguage: locator('code', 'en_US'),
          bodyParameters: { parameter: [{ text: 'two\nlines' }] },
          options: {},
        },
        'continueRegularOutput',
      ),
    ],
  );
}
