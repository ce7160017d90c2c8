/**
 * Issue 57: the n8n community node package (integrations/n8n) without n8n running — its types
 * generated from the API's OpenAPI document (and a renamed field failing the build), every node
 * parameter that fills a body field checked against the document, the trigger's event filter, its
 * signature check, the Device ID's path and rule (workspace tokens), the Send Template's lists
 * (what they call, what a linked device's 404 makes of them), and n8n's own lint of the package. The package is read as packed (the tarball
 * n8n.test.ts installs), unpacked beside its dev dependencies.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEVICE_ID_PATTERN } from '@mgw/contracts';
import { installN8nNodesDeps, N8N_NODES_DIR, packN8nNodes } from '@mgw/testing';
import { TEMPLATE_LIST as templates } from '../support/n8n-templates.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GENERATE = path.join(N8N_NODES_DIR, 'scripts/generate-api-types.mjs');
const API = '/api/messenger/v1';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
interface Doc {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: Schema }> };
        parameters?: Array<{ name: string; in: string }>;
      }
    >
  >;
  components: { schemas: Record<string, Schema> };
}
interface Property {
  name: string;
  type: string;
  options?: Array<{ name: string; value?: unknown }>;
  displayOptions?: { show?: Record<string, unknown[]> };
}
interface Operation {
  route: string;
  method: string;
  fields: Record<string, string>;
  pathFields?: Record<string, string>;
}

/** The node a fake n8n context's getNode() answers (errors name it). */
const NODE = {
  id: 'n1',
  name: 'Messenger Gateway',
  type: 'x',
  typeVersion: 1,
  position: [0, 0],
  parameters: {},
};

/** Runs a program; answers its exit code and output (never rejects on a non-zero exit). */
async function exitOf(file: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  try {
    const { stdout, stderr } = await run(file, args, {
      ...opts,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 300_000,
    });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** The API's document, from its CLI as a process (as the generator takes it). */
async function apiDocument(): Promise<Doc> {
  const { stdout } = await run(
    process.execPath,
    ['--conditions=development', '--import', 'tsx', 'services/api/src/cli/openapi.ts'],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as Doc;
}

/** The schema at `dotted` (`attachment.url`) inside `schema`, through $ref and every combinator. */
function fieldOf(doc: Doc, schema: Schema | undefined, dotted: string): Schema | undefined {
  if (!schema) return undefined;
  if (schema.$ref) return fieldOf(doc, doc.components.schemas[schema.$ref.split('/').pop()!], dotted);
  const [head, ...rest] = dotted.split('.');
  const candidates = [schema, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  for (const candidate of candidates) {
    const resolved = candidate.$ref ? doc.components.schemas[candidate.$ref.split('/').pop()!] : candidate;
    const field = resolved?.properties?.[head!];
    if (field) return rest.length === 0 ? field : fieldOf(doc, field, rest.join('.'));
    if (candidate !== schema && resolved) {
      const nested = fieldOf(doc, resolved, dotted);
      if (nested) return nested;
    }
  }
  return undefined;
}

describe('n8n package (integrations/n8n): types from the OpenAPI document, fields, trigger, lint', function () {
  this.timeout(120_000);
  let doc: Doc;
  let unpacked: string;
  let load: NodeJS.Require;
  let env: NodeJS.ProcessEnv;
  let node: string;

  before(async function () {
    this.timeout(20 * 60_000);
    ({ env, node } = await installN8nNodesDeps());
    const { tarball } = await packN8nNodes();
    // Inside the package's node_modules: the unpacked files resolve n8n-workflow from there.
    unpacked = await mkdtemp(path.join(N8N_NODES_DIR, 'node_modules', '.mgw-unpacked-'));
    await run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
    load = createRequire(path.join(unpacked, 'package.json'));
    doc = await apiDocument();
  });
  after(async () => {
    if (unpacked) await rm(unpacked, { recursive: true, force: true });
  });

  it('When the types are generated again from the API\u2019s document, then they equal the committed api-types.d.ts', async () => {
    const check = await exitOf(process.execPath, [GENERATE, '--check'], { cwd: ROOT });
    expect(check.code, check.output).to.equal(0);
  });

  it('When the document renames a field of the /send body, then the check fails and the package no longer compiles', async function () {
    this.timeout(240_000);
    const renamed = structuredClone(doc);
    const send = renamed.paths[`${API}/send`]!.post!.requestBody!.content['application/json']!.schema;
    const { text, ...others } = send.properties!;
    send.properties = { ...others, message: text! };
    const work = await mkdtemp(path.join(N8N_NODES_DIR, 'node_modules', '.mgw-typecheck-'));
    try {
      const renamedFile = path.join(work, 'renamed-openapi.json');
      await writeFile(renamedFile, JSON.stringify(renamed));
      const drift = await exitOf(process.execPath, [GENERATE, '--check', '--document', renamedFile], {
        cwd: ROOT,
      });
      expect(drift.code, 'the drift check sees the rename').to.equal(1);
      expect(drift.output).to.match(/differs from what the document generates/);
      // A copy of the package's sources: it compiles with the committed types, not with the renamed ones.
      for (const entry of ['nodes', 'credentials', 'icons', 'tsconfig.json', 'package.json']) {
        await cp(path.join(N8N_NODES_DIR, entry), path.join(work, entry), { recursive: true });
      }
      const tsc = path.join(N8N_NODES_DIR, 'node_modules/typescript/bin/tsc');
      const before = await exitOf(node, [tsc, '-p', path.join(work, 'tsconfig.json'), '--noEmit'], { env });
      expect(before.code, before.output).to.equal(0);
      const types = path.join(work, 'nodes/MessengerGateway/api-types.d.ts');
      const generate = await exitOf(process.execPath, [GENERATE, '--document', renamedFile, '--out', types], {
        cwd: ROOT,
      });
      expect(generate.code, generate.output).to.equal(0);
      const after = await exitOf(node, [tsc, '-p', path.join(work, 'tsconfig.json'), '--noEmit'], { env });
      expect(after.code, 'the package compiles against a /send without `text`').to.not.equal(0);
      expect(after.output).to.match(/operations\.ts.*'text'/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });

  it('When every operation is read from the built node, then each parameter it maps is a parameter of that operation, and each field and path parameter is in the document', () => {
    const { MessengerGateway } = load('./dist/nodes/MessengerGateway/MessengerGateway.node.js') as {
      MessengerGateway: new () => { description: { properties: Property[] } };
    };
    const { OPERATIONS } = load('./dist/nodes/MessengerGateway/operations.js') as {
      OPERATIONS: Record<string, Operation>;
    };
    const properties = new MessengerGateway().description.properties;
    const shownFor = (resource: string, operation: string) =>
      properties.filter((p) => {
        const show = p.displayOptions?.show ?? {};
        return (
          (!show.resource || show.resource.includes(resource)) &&
          (!show.operation || show.operation.includes(operation))
        );
      });
    // Every operation the UI offers has an entry, and the other way round.
    const offered = properties
      .filter((p) => p.name === 'operation')
      .flatMap((p) =>
        (p.options ?? []).map((o) => `${String(p.displayOptions?.show?.resource?.[0])}:${String(o.value)}`),
      );
    expect([...offered].sort()).to.deep.equal(Object.keys(OPERATIONS).sort());

    const problems: string[] = [];
    let mapped = 0;
    for (const [key, op] of Object.entries(OPERATIONS)) {
      const [resource, operation] = key.split(':') as [string, string];
      const apiOp = doc.paths[`${API}${op.route}`]?.[op.method];
      if (!apiOp) {
        problems.push(`${key}: ${op.method.toUpperCase()} ${op.route} is not in the document`);
        continue;
      }
      const shown = shownFor(resource, operation);
      const body = apiOp.requestBody?.content['application/json']?.schema;
      for (const [param, field] of Object.entries(op.fields)) {
        mapped++;
        const [top, option] = param.split('.') as [string, string | undefined];
        const property = shown.find((p) => p.name === top);
        const found = option === undefined ? property : property?.options?.find((o) => o.name === option);
        if (!found) problems.push(`${key}: the node has no parameter ${param}`);
        if (!fieldOf(doc, body, field))
          problems.push(`${key}: ${param} fills ${field}, which the /${op.route} body has not`);
      }
      for (const [param, name] of Object.entries(op.pathFields ?? {})) {
        if (!shown.some((p) => p.name === param)) problems.push(`${key}: the node has no parameter ${param}`);
        if (!apiOp.parameters?.some((p) => p.in === 'path' && p.name === name)) {
          problems.push(`${key}: ${op.route} has no path parameter ${name}`);
        }
      }
    }
    expect(problems).to.deep.equal([]);
    expect(mapped, 'body fields mapped').to.be.greaterThan(30);
  });

  it('When the trigger is read, then its event filter offers exactly the event types PUT /webhook takes', () => {
    const { MessengerGatewayTrigger } = load(
      './dist/nodes/MessengerGatewayTrigger/MessengerGatewayTrigger.node.js',
    ) as {
      MessengerGatewayTrigger: new () => { description: { properties: Property[] } };
    };
    const events = new MessengerGatewayTrigger().description.properties.find((p) => p.name === 'events')!;
    const put = doc.paths[`${API}/webhook`]!.put!.requestBody!.content['application/json']!.schema;
    const allowed = fieldOf(doc, put, 'events')!.items!.enum as string[];
    expect(events.options!.map((o) => o.value).sort()).to.deep.equal([...allowed].sort());
  });

  it('When deliveries are checked as Standard Webhooks signs them, then only a fresh one signed with the secret over its exact body passes', () => {
    const { verifyDelivery } = load('./dist/nodes/MessengerGatewayTrigger/signature.js') as {
      verifyDelivery: (
        s: string | undefined,
        h: Record<string, unknown>,
        b: Buffer,
        now: number,
      ) => { ok: boolean; reason?: string };
    };
    const key = randomBytes(32);
    const secret = `whsec_${key.toString('base64')}`;
    const body = Buffer.from('{"type":"message.received","data":{"text":"hi"}}');
    const now = 1_795_000_000;
    const sign = (k: Buffer, id: string, ts: number, b: Buffer = body) =>
      `v1,${createHmac('sha256', k).update(`${id}.${ts}.`).update(b).digest('base64')}`;
    const headers = (signature: string, ts = now, id = 'evt-1') => ({ id, timestamp: String(ts), signature });
    const ok = (h: Record<string, unknown>, b = body) => verifyDelivery(secret, h, b, now).ok;

    expect(ok(headers(sign(key, 'evt-1', now)))).to.equal(true);
    // during a rotation: two signatures, ours second
    expect(ok(headers(`${sign(randomBytes(32), 'evt-1', now)} ${sign(key, 'evt-1', now)}`))).to.equal(true);
    expect(ok(headers(sign(key, 'evt-1', now - 299), now - 299)), 'within five minutes').to.equal(true);
    const refused: Array<[string, boolean]> = [
      ['another secret', ok(headers(sign(randomBytes(32), 'evt-1', now)))],
      ['another body', ok(headers(sign(key, 'evt-1', now)), Buffer.from(`${body.toString()} `))],
      ['another id', ok(headers(sign(key, 'evt-1', now), now, 'evt-2'))],
      ['six minutes old', ok(headers(sign(key, 'evt-1', now - 360), now - 360))],
      ['six minutes ahead', ok(headers(sign(key, 'evt-1', now + 360), now + 360))],
      ['not v1', ok(headers(sign(key, 'evt-1', now).replace(/^v1,/, 'v2,')))],
      ['no headers', ok({})],
      ['no secret stored', verifyDelivery(undefined, headers(sign(key, 'evt-1', now)), body, now).ok],
    ];
    expect(refused.filter(([, passed]) => passed).map(([what]) => what)).to.deep.equal([]);
  });

  it('When a Device ID is set (the node\u2019s over the credential\u2019s), then every route goes under /devices/{id}, a workspace\u2019s own routes excepted, and an id the gateway could not have fails before any request', () => {
    const transport = load('./dist/nodes/MessengerGateway/transport.js') as {
      DEVICE_ID_PATTERN: RegExp;
      devicePath: (path: string, deviceId?: string) => string;
      deviceIdOf: (
        ctx: unknown,
        credentials: { deviceId?: string },
        itemIndex?: number,
      ) => string | undefined;
    };
    // The gateway's own rule (libs/contracts), not a copy that drifts.
    expect(transport.DEVICE_ID_PATTERN.source).to.equal(DEVICE_ID_PATTERN.source);
    expect(transport.DEVICE_ID_PATTERN.flags).to.equal(DEVICE_ID_PATTERN.flags);

    const { devicePath } = transport;
    expect(devicePath('/send')).to.equal('/send');
    expect(devicePath('/send', '')).to.equal('/send');
    expect(devicePath('/send', 'd0123456789abcdef')).to.equal('/devices/d0123456789abcdef/send');
    expect(devicePath('/chats/1555%40g.us/labels/7', 'shop_1')).to.equal(
      '/devices/shop_1/chats/1555%40g.us/labels/7',
    );
    expect(devicePath('/webhook', 'a-b')).to.equal('/devices/a-b/webhook');
    expect(devicePath('/status', 'x/../y')).to.equal('/devices/x%2F..%2Fy/status');
    for (const own of ['/workspace', '/devices', '/devices/d1', '/tokens', '/tokens/t1']) {
      expect(devicePath(own, 'd1'), own).to.equal(own);
    }

    // A fake node context: the node's parameters per item, for an action node (itemIndex) and a trigger (none).
    const calls: unknown[][] = [];
    const ctx = (deviceId: unknown) => ({
      getNode: () => NODE,
      getNodeParameter: (name: string, ...rest: unknown[]) => {
        calls.push([name, ...rest]);
        return name === 'deviceId' && deviceId !== undefined ? deviceId : rest[rest.length - 1];
      },
    });
    // `itemIndex` null: a trigger's hook, which reads its parameters without an item.
    const of = (fromNode: unknown, fromCredential?: string, itemIndex: number | null = 0) =>
      transport.deviceIdOf(ctx(fromNode), { deviceId: fromCredential }, itemIndex ?? undefined);
    expect(of(undefined)).to.equal(undefined);
    expect(of('', '  ')).to.equal(undefined);
    expect(of('', 'acme-1')).to.equal('acme-1');
    expect(of(' shop_2\n', 'acme-1'), 'the node\u2019s, trimmed, over the credential\u2019s').to.equal(
      'shop_2',
    );
    expect(of('shop_2', undefined, null), 'a trigger (no item)').to.equal('shop_2');
    expect(of('', 'acme-1', null), 'a trigger, the credential\u2019s').to.equal('acme-1');
    expect(of('x'.repeat(32))).to.equal('x'.repeat(32));
    // An action node reads it per item (name, item, fallback), a trigger without one (name, fallback).
    calls.length = 0;
    of('d1', undefined, 3);
    of('d1', undefined, null);
    expect(calls).to.deep.equal([
      ['deviceId', 3, ''],
      ['deviceId', ''],
    ]);
    const refusal = (fromNode: unknown, fromCredential?: string) => {
      try {
        of(fromNode, fromCredential);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('Shop 1')).to.match(
      /^The node's Device ID "Shop 1" is not a device ID: 1 to 32 lowercase/,
    );
    expect(refusal('', '_leading')).to.match(/^The credential's Device ID "_leading" is not a device ID/);
    for (const bad of ['x'.repeat(33), 'a/b', '-x', 'd1?x=1', 'ü']) {
      expect(refusal(bad), bad).to.not.equal('accepted');
    }
  });

  it('When the Send Template\u2019s lists are opened, then they read GET /cloud/templates on the node\u2019s device (the chosen template\u2019s languages), and a linked device\u2019s 404 is the list\u2019s error', async () => {
    type Search = (this: unknown, filter?: string) => Promise<{ results: Array<Record<string, string>> }>;
    const { templateSearch } = load('./dist/nodes/MessengerGateway/template-search.js') as {
      templateSearch: { searchTemplates: Search; searchTemplateLanguages: Search };
    };
    const urls: string[] = [];
    // n8n's load-options context as the methods use it: the node's parameters, the credential, its HTTP helper.
    const ctx = (opts: { deviceId?: string; templateName?: unknown; status?: number; body?: unknown }) => ({
      getNode: () => NODE,
      getNodeParameter: (name: string, fallback: unknown) =>
        name === 'deviceId' ? (opts.deviceId ?? '') : fallback,
      getCurrentNodeParameter: (name: string) => (name === 'templateName' ? opts.templateName : undefined),
      getCredentials: async () => ({ baseUrl: 'https://gateway.example/', apiToken: 'mgw_x' }),
      helpers: {
        httpRequestWithAuthentication: async (
          credential: string,
          options: { method: string; url: string },
        ) => {
          urls.push(`${credential} ${options.method} ${options.url}`);
          const body = opts.body ?? {
            success: true,
            data: { templates, fetchedAt: '2026-11-30T12:00:00.000Z' },
          };
          return { statusCode: opts.status ?? 200, body };
        },
      },
    });
    const names = await templateSearch.searchTemplates.call(ctx({}), 'order');
    expect(names.results).to.deep.equal([
      { name: 'order_update', value: 'order_update', description: 'UTILITY · ar (PAUSED), en_US' },
    ]);
    const languages = await templateSearch.searchTemplateLanguages.call(
      ctx({ deviceId: 'shop_1', templateName: 'order_update' }),
    );
    expect(languages.results.map((r) => r.value)).to.deep.equal(['ar', 'en_US']);
    expect(urls).to.deep.equal([
      'messengerGatewayApi GET https://gateway.example/api/messenger/v1/cloud/templates',
      'messengerGatewayApi GET https://gateway.example/api/messenger/v1/devices/shop_1/cloud/templates',
    ]);
    const linked = ctx({
      status: 404,
      body: { success: false, error: 'This device is not a Cloud API number' },
    });
    const refusal = await templateSearch.searchTemplates.call(linked).then(
      () => undefined,
      (err: Error & { httpCode?: string }) => err,
    );
    expect(refusal?.message).to.equal('This device is not a Cloud API number');
    expect(refusal?.httpCode).to.equal('404');
  });

  it('When n8n\u2019s own lint runs on the package (n8n-node lint, the community node rules), then it finds no error', async () => {
    const lint = await exitOf(
      node,
      [path.join(N8N_NODES_DIR, 'node_modules/@n8n/node-cli/bin/n8n-node.mjs'), 'lint'],
      {
        cwd: N8N_NODES_DIR,
        env: { ...env, FORCE_COLOR: '0' },
      },
    );
    expect(lint.code, lint.output).to.equal(0);
  });
});
