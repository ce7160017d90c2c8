import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type Joi from 'joi';
import {
  contactCheckBodySchema,
  groupCreateBodySchema,
  groupParticipantsBodySchema,
  sendBodySchema,
  validate,
  validateSendBody,
  webhookBodySchema,
  type ValidationDetail,
} from '@mgw/contracts';
import { optOutSettingsSchema, policyOverrideSchema } from '@mgw/store';
import { HOSTILE_LIST_ENTRIES } from '@mgw/testing';
import { connectBodySchema } from '../src/features/devices/admin.js';
import { ADMIN_API_TOKEN, adminCall, startAdminApi } from './helpers/admin.js';
import { call, createToken, freshDeviceId, markConnected, type TestApi } from './helpers/api.js';

/**
 * Hostile entries in list-shaped fields: joi compares a list's entries (`unique`) as they came,
 * so a comparator that assumes a well-formed entry threw on `null` — a 500 instead of a 400.
 */
const HOSTILE: unknown[] = [...HOSTILE_LIST_ENTRIES, 'x'.repeat(100_000)];

/** Every list of a request schema, as dotted paths (`0` for "an item of"), found in its description. */
function listPaths(desc: unknown, path: string[] = []): string[] {
  if (typeof desc !== 'object' || desc === null) return [];
  const d = desc as {
    type?: string;
    keys?: Record<string, unknown>;
    items?: unknown[];
    matches?: { schema?: unknown; then?: unknown; otherwise?: unknown }[];
    whens?: { schema?: unknown; then?: unknown; otherwise?: unknown }[];
  };
  const found: string[] = [];
  if (d.type === 'array') {
    found.push(path.join('.'));
    for (const item of d.items ?? []) found.push(...listPaths(item, [...path, '0']));
  }
  for (const [key, value] of Object.entries(d.keys ?? {})) found.push(...listPaths(value, [...path, key]));
  for (const m of [...(d.matches ?? []), ...(d.whens ?? [])])
    for (const s of [m.schema, m.then, m.otherwise]) found.push(...listPaths(s, path));
  return [...new Set(found)];
}

/** `body` with the list at `path` replaced by `list`. */
function withList(body: Record<string, unknown>, path: string, list: unknown[]): Record<string, unknown> {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let node: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[keys[keys.length - 1]!] = list;
  return copy;
}

const get = (body: Record<string, unknown>, path: string): unknown[] =>
  path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], body) as unknown[];

const MAX = 1000;
const send = sendBodySchema(MAX);
/** A valid body per request schema and list, holding that list with well-formed entries. */
const CASES: {
  name: string;
  schema: Joi.Schema;
  lists: Record<string, Record<string, unknown>>;
  /** Entries of HOSTILE that are fine there (a cap of 0). */
  fine?: unknown[];
}[] = [
  {
    name: 'POST /send',
    schema: send,
    lists: {
      to: { to: ['15551234567', { phone: '15551234568', vars: { name: 'Ann' } }], text: 'hi {{name}}' },
      mentions: { to: '15551234567', text: 'hi @15551234568', mentions: ['15551234568'] },
      contacts: { to: '15551234567', contacts: [{ name: 'Ann', phones: ['15551234568'] }] },
      'contacts.0.phones': { to: '15551234567', contacts: [{ name: 'Ann', phones: ['15551234568'] }] },
      'poll.options': { to: '15551234567', poll: { question: 'Which?', options: ['a', 'b'] } },
      'template.components': {
        to: '15551234567',
        template: { name: 'hello', language: 'en', components: [{ type: 'body', parameters: [] }] },
      },
      'template.components.0.parameters': {
        to: '15551234567',
        template: {
          name: 'hello',
          language: 'en',
          components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ann' }] }],
        },
      },
    },
  },
  {
    name: 'POST /contacts/check',
    schema: contactCheckBodySchema,
    lists: { phones: { phones: ['15551234567'] } },
  },
  {
    name: 'POST /groups',
    schema: groupCreateBodySchema,
    lists: { participants: { subject: 'Team', participants: ['15551234567', '15551234568'] } },
  },
  {
    name: 'POST /groups/:id/participants',
    schema: groupParticipantsBodySchema,
    lists: { participants: { action: 'add', participants: ['15551234567'] } },
  },
  {
    name: 'PUT /webhook',
    schema: webhookBodySchema,
    lists: { events: { url: 'https://example.test/hook', events: ['message.sent'] } },
  },
  {
    name: 'admin PUT /devices/:id/opt-out-settings',
    schema: optOutSettingsSchema,
    lists: {
      optOutKeywords: { optOutKeywords: ['stop', 'إلغاء'] },
      optInKeywords: { optInKeywords: ['start'] },
    },
  },
  {
    name: 'admin PUT /devices/:id/policy',
    schema: policyOverrideSchema,
    lists: { warmupCaps: { warmupCaps: [10, 20] } },
    fine: [0],
  },
  { name: 'admin POST /devices/:id/connect', schema: connectBodySchema, lists: {} },
];

const check = (schema: Joi.Schema, body: unknown) =>
  schema === send ? validateSendBody(send, body, MAX) : validate(schema, body);

function expectDetails(details: ValidationDetail[] | undefined, what: string): void {
  expect(details, `${what}: refused`).to.be.an('array').that.is.not.empty;
  for (const d of details!) {
    expect(d.path, what).to.be.an('array');
    expect(d.message, what).to.be.a('string').that.is.not.empty;
  }
}

describe('Hostile list entries and bodies that are not UTF-8: a 400 with the details, never a 500 or a 202', () => {
  describe('every list of every request schema', () => {
    for (const c of CASES) {
      it(`When ${c.name} lists null, numbers, booleans, arrays, odd objects or huge strings, then validation refuses each with its details and never throws`, () => {
        // Every list the schema has is probed (a list added later without a case here fails).
        expect(Object.keys(c.lists).sort()).to.deep.equal(listPaths(c.schema.describe()).sort());
        for (const [path, body] of Object.entries(c.lists)) {
          expect(check(c.schema, body).details, `${c.name}: the base body of ${path} is valid`).to.equal(
            undefined,
          );
          const good = get(body, path)[0];
          for (const hostile of HOSTILE.filter((h) => !c.fine?.includes(h))) {
            for (const list of [[good, hostile], [hostile, good], [hostile, hostile], [hostile]]) {
              const what = `${c.name} ${path}: ${JSON.stringify(list).slice(0, 80)}`;
              let result: ReturnType<typeof check> | undefined;
              expect(() => (result = check(c.schema, withList(body, path, list))), what).to.not.throw();
              expectDetails(result!.details, what);
            }
          }
        }
      });
    }
  });

  describe('over HTTP', () => {
    let t: TestApi;
    let deviceId: string;
    /** Per token kind: its token, and where its paths start (a workspace token names its device). */
    const as = {
      'a device token': { token: '', api: '' },
      'a workspace token': { token: '', api: '' },
    };
    before(async () => {
      t = await startAdminApi();
      deviceId = freshDeviceId();
      await markConnected(t.redis, deviceId);
      as['a device token'] = { token: await createToken(t, { deviceId }), api: t.api };
      // A workspace's token, on a device of its own named in the path (docs/workspaces.md).
      const workspace = `hostile${randomBytes(4).toString('hex')}`;
      await adminCall(t, '/workspaces', { method: 'POST', json: { id: workspace, name: workspace } });
      const owner = await adminCall(t, `/workspaces/${workspace}/tokens`, {
        method: 'POST',
        json: { name: 'owner' },
      });
      const token = owner.body.value as string;
      const made = await call(`${t.api}/devices`, { method: 'POST', token });
      const device = (made.body.data as { deviceId: string }).deviceId;
      await markConnected(t.redis, device);
      as['a workspace token'] = { token, api: `${t.api}/devices/${device}` };
    });
    after(() => t.close());

    const NOT_UTF8 = {
      success: false,
      error: 'Invalid request data',
      details: [{ path: [], message: 'Malformed JSON body: not valid UTF-8' }],
    };
    /** JSON whose text field holds bytes that are no UTF-8: a lone continuation byte, an overlong form, a cut sequence. */
    const notUtf8 = (bad: number[]) =>
      Buffer.concat([Buffer.from('{"to":"15551234567","text":"hi '), Buffer.from(bad), Buffer.from('"}')]);
    const raw = (url: string, token: string, body: Buffer, headers: Record<string, string> = {}) =>
      call(url, { body, headers: { 'content-type': 'application/json', ...headers }, method: 'POST', token });

    for (const kind of Object.keys(as) as (keyof typeof as)[]) {
      it(`When POST /send lists null beside a number, then 400 naming the entry (it was a 500 from the duplicate check) — ${kind}`, async () => {
        const { api, token } = as[kind];
        const res = await call(`${api}/send`, { token, json: { to: ['15551234567', null], text: 'hi' } });
        expect(res.status).to.equal(400);
        expect(res.body).to.deep.equal({
          success: false,
          error: 'Invalid request data',
          details: [{ path: ['to', 1], message: 'to[1] must be a string' }],
        });
      });

      it(`When every public list-shaped field holds a hostile entry, then each answer is 400 with the details — ${kind}`, async () => {
        const { api, token } = as[kind];
        const requests: [string, unknown][] = [
          ['/send', { to: [null, null], text: 'hi' }],
          ['/send', { to: ['15551234567', { phone: '15551234568', odd: 1 }], text: 'hi' }],
          ['/send', { to: [['15551234567'], '15551234567'], text: 'hi' }],
          ['/send', { to: '15551234567', text: 'hi', mentions: ['15551234568', null] }],
          ['/contacts/check', { phones: ['15551234567', null, 7] }],
          ['/groups', { subject: 'Team', participants: ['15551234567', {}] }],
          ['/groups/120363012345678901@g.us/participants', { action: 'add', participants: [null] }],
        ];
        for (const [path, json] of requests) {
          const res = await call(`${api}${path}`, { token, json });
          expect(res.status, `${path} ${JSON.stringify(json)}`).to.equal(400);
          expect(res.body.error).to.equal('Invalid request data');
          expectDetails(res.body.details as ValidationDetail[], path);
        }
        const hook = await call(`${api}/webhook`, {
          token,
          method: 'PUT',
          json: { url: 'https://example.test/h', events: [null, 'message.sent'] },
        });
        expect(hook.status).to.equal(400);
        expectDetails(hook.body.details as ValidationDetail[], 'PUT /webhook');
      });

      it(`When a body is not valid UTF-8 — small, streamed, gzipped — then 400 "not valid UTF-8" (it was accepted with 202) — ${kind}`, async () => {
        const { api, token } = as[kind];
        for (const bad of [[0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xff]]) {
          const res = await raw(`${api}/send`, token, notUtf8(bad));
          expect(res.status, JSON.stringify(bad)).to.equal(400);
          expect(res.body).to.deep.equal(NOT_UTF8);
        }
        // Over 64 KB: read as it streams; gzipped: through the decompressor.
        const long = Buffer.concat([
          Buffer.from(`{"to":"15551234567","text":"${'a'.repeat(70_000)}`),
          Buffer.from([0xfe]),
          Buffer.from('"}'),
        ]);
        expect((await raw(`${api}/send`, token, long)).body).to.deep.equal(NOT_UTF8);
        const gz = await raw(`${api}/send`, token, gzipSync(notUtf8([0x80])), { 'content-encoding': 'gzip' });
        expect(gz.status).to.equal(400);
        expect(gz.body).to.deep.equal(NOT_UTF8);
        // Other routes read their bodies the same way.
        const otp = await raw(
          `${api}/otp`,
          token,
          Buffer.concat([
            Buffer.from('{"phone":"15551234567","code":"1234","language":"'),
            Buffer.from([0xc3]),
            Buffer.from('"}'),
          ]),
        );
        expect(otp.body).to.deep.equal(NOT_UTF8);
        // Well-formed UTF-8 beyond ASCII still goes through.
        const fine = await raw(
          `${api}/send`,
          token,
          Buffer.from('{"to":"15551234567","text":"héllo 中文 😀"}'),
        );
        expect(fine.status).to.equal(202);
      });
    }

    it('When an admin list (opt-out keywords, warm-up caps) holds null or a number, then 400 with the details (the keywords were a 500)', async () => {
      for (const [path, json] of [
        [`/devices/${deviceId}/opt-out-settings`, { optOutKeywords: ['stop', null] }],
        [`/devices/${deviceId}/opt-out-settings`, { optInKeywords: [5, 5] }],
        [`/devices/${deviceId}/policy`, { warmupCaps: [10, null, 'x'] }],
      ] as const) {
        const res = await adminCall(t, path, { method: 'PUT', json });
        expect(res.status, `${path} ${JSON.stringify(json)}`).to.equal(400);
        expect(res.body.error).to.equal('Invalid request data');
        expectDetails(res.body.details as ValidationDetail[], path);
      }
      const keywords = await adminCall(t, `/devices/${deviceId}/opt-out-settings`, {
        method: 'PUT',
        json: { optOutKeywords: ['stop', null] },
      });
      expect(keywords.body.details).to.deep.equal([
        { path: ['optOutKeywords', 1], message: 'optOutKeywords[1] must be a string' },
      ]);
    });

    it('When the admin API or the dashboard sign-in gets a body that is not UTF-8, then 400 "not valid UTF-8"', async () => {
      const signIn = await call(`${t.url}/api/admin/v1/session`, {
        method: 'POST',
        body: Buffer.concat([Buffer.from('{"password":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
        headers: { 'content-type': 'application/json' },
      });
      expect(signIn.status).to.equal(400);
      expect(signIn.body).to.deep.equal(NOT_UTF8);
      const settings = await call(`${t.url}/api/admin/v1/devices/${deviceId}/opt-out-settings`, {
        method: 'PUT',
        body: Buffer.concat([Buffer.from('{"optOutKeywords":["'), Buffer.from([0x80]), Buffer.from('"]}')]),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_API_TOKEN}` },
      });
      expect(settings.status).to.equal(400);
      expect(settings.body).to.deep.equal(NOT_UTF8);
    });
  });
});
