import { expect } from 'chai';
import Joi from 'joi';
import { compileErrors, validate as validateOpenApi } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { connectQuerySchema, otpBodySchema, sendBodySchema, validate } from '@mgw/contracts';
import { buildOpenApi } from '../../src/openapi/document.js';
import { joiToJsonSchema } from '../../src/openapi/joi-schema.js';
import { call, startApi, type TestApi } from '../helpers/api.js';

type Doc = { paths: Record<string, Record<string, Record<string, unknown>>> };

const ajv = new Ajv2020({ strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
const compiled = new Map<Joi.Schema, ReturnType<typeof ajv.compile>>();

/** What joi says of `value` and what the document's schema says, side by side. */
function agree(schema: Joi.Schema, value: unknown) {
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = ajv.compile(joiToJsonSchema(schema))));
  return { joi: validate(schema, value).details === undefined, document: check(value) };
}

const b64 = Buffer.from('hello world').toString('base64');

describe('OpenAPI document of the public API', () => {
  let t: TestApi;
  before(async () => {
    t = await startApi();
  });
  after(() => t.close());

  it('When it is fetched without a token, then it is served and equals the one built from the schemas', async () => {
    const res = await call(`${t.api}/openapi.json`);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal(JSON.parse(JSON.stringify(buildOpenApi(t.config))));
    expect(res.body.openapi).to.equal('3.1.0');
  });

  it('When the document is validated by @readme/openapi-parser, then it is a valid OpenAPI 3.1 document', async () => {
    const result = await validateOpenApi(structuredClone(buildOpenApi(t.config)) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).to.equal(true);
    expect(result.warnings).to.deep.equal([]);
    // The validator is not blind: a parameter in no known place is refused.
    const broken = structuredClone(buildOpenApi(t.config)) as unknown as Doc;
    (broken.paths['/api/messenger/v1/connect']!.get!.parameters as { in: string }[])[0]!.in = 'body';
    expect((await validateOpenApi(broken as never)).valid).to.equal(false);
  });

  it('When every endpoint is looked for, then each is documented with its security, parameters and errors', () => {
    const doc = buildOpenApi(t.config) as unknown as Doc & Record<string, unknown>;
    const base = '/api/messenger/v1';
    expect(Object.keys(doc.paths)).to.include.members([
      `${base}/connect`,
      `${base}/disconnect`,
      `${base}/status`,
      `${base}/send`,
      `${base}/otp`,
      `${base}/messages/{id}`,
    ]);
    expect(Object.keys(doc.paths[`${base}/connect`]!)).to.have.members(['get', 'post']);
    const schemes = (doc.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
    expect(schemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
    expect(schemes.queryToken).to.include({ type: 'apiKey', in: 'query', name: 'token' });
    const send = doc.paths[`${base}/send`]!.post as { responses: Record<string, { headers: object }> };
    expect(Object.keys(send.responses)).to.include.members([
      '202',
      '400',
      '401',
      '409',
      '413',
      '422',
      '429',
      '503',
    ]);
    expect(send.responses['202']!.headers).to.have.keys(
      'X-Request-Id',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Idempotent-Replayed',
    );
    const params = (doc.paths[`${base}/connect`]!.get as { parameters: { name: string }[] }).parameters;
    expect(params.map((p) => p.name)).to.have.members(['method', 'phoneNumber', 'forceNew', 'rawQrCode']);
  });

  it('When bodies are judged by joi and by the document, then both accept and refuse the same ones', () => {
    const send = sendBodySchema(3);
    const cases: [Joi.Schema, unknown][] = [
      [send, { to: '15551234567', text: 'hi' }],
      [send, { to: ['15551234567', '15551234568'], text: 'hi' }],
      [send, { to: '15551234567', attachment: { type: 'image', base64: b64, caption: 'c' } }],
      [send, { to: '15551234567', attachment: { type: 'document', url: 'https://example.com/a.pdf' } }],
      [send, { to: '15551234567' }],
      [send, { to: [], text: 'x' }],
      [send, { to: ['15551234567', '15551234567'], text: 'x' }],
      [send, { to: ['1', '2', '3', '4'].map((n) => `155512345${n}0`), text: 'x' }],
      [send, { to: '0123', text: 'x' }],
      [send, { to: '15551234567', text: '' }],
      [send, { to: '15551234567', text: 'x', extra: 1 }],
      [send, { to: '15551234567', attachment: { type: 'gif', base64: b64 } }],
      [send, { to: '15551234567', attachment: { type: 'image' } }],
      [send, { to: '15551234567', attachment: { type: 'image', base64: b64, url: 'https://e.com/x' } }],
      [send, { to: '15551234567', attachment: { type: 'image', url: 'ftp://e.com/x' } }],
      [send, { to: '15551234567', attachment: { type: 'image', base64: 'not base64!' } }],
      [
        send,
        { to: '15551234567', attachment: { type: 'audio', base64: b64, mimeType: 'audio/ogg; codecs=opus' } },
      ],
      [send, { to: '15551234567', attachment: { type: 'audio', base64: b64, mimeType: 'ogg' } }],
      [otpBodySchema, { phone: '15551234567', code: '123456' }],
      [otpBodySchema, { phone: '15551234567', code: 12345678, language: 'Arabic' }],
      [otpBodySchema, { phone: '15551234567', code: '123' }],
      [otpBodySchema, { phone: '15551234567', code: 999 }],
      [otpBodySchema, { phone: '15551234567', code: '1234', language: 'French' }],
      [otpBodySchema, { code: '1234' }],
      [connectQuerySchema, { method: 'pairingCode', phoneNumber: '15551234567' }],
      [connectQuerySchema, { method: 'pairingCode' }],
      [connectQuerySchema, { method: 'qrCode', rawQrCode: true, forceNew: false }],
      [connectQuerySchema, { method: 'sms' }],
    ];
    const disagreements = cases
      .map(([schema, value]) => ({ value, ...agree(schema, value) }))
      .filter((c) => c.joi !== c.document);
    expect(disagreements).to.deep.equal([]);
    // Not vacuous: both outcomes occur.
    const outcomes = new Set(cases.map(([schema, value]) => agree(schema, value).joi));
    expect([...outcomes]).to.have.members([true, false]);
  });

  it('When a joi schema changes, then the document follows it (one source of truth)', () => {
    const doc = buildOpenApi({ ...t.config, maxRecipients: 7 }) as unknown as Doc;
    const body = (
      doc.paths['/api/messenger/v1/send']!.post as {
        requestBody: {
          content: Record<string, { schema: { properties: { to: { anyOf: { maxItems?: number }[] } } } }>;
        };
      }
    ).requestBody.content['application/json']!.schema;
    expect(body.properties.to.anyOf[0]!.maxItems).to.equal(7);
    // A rule the converter cannot express stops the build of the document instead of being dropped.
    expect(() => joiToJsonSchema(Joi.object({ email: Joi.string().email() }))).to.throw(
      /string rule "email"/,
    );
    expect(() => joiToJsonSchema(Joi.object({ at: Joi.date() }))).to.throw(/joi type "date"/);
  });

  it('When /docs is opened, then Swagger UI is served from the gateway, pointed at the document', async () => {
    const page = await fetch(`${t.url}/docs`);
    expect(page.status).to.equal(200);
    const html = await page.text();
    expect(html).to.include('/docs/assets/swagger-ui-bundle.js');
    expect(html, 'nothing from elsewhere').not.to.match(/(src|href)="(https?:)?\/\//);
    expect(page.headers.get('content-security-policy')).to.include("script-src 'self'");
    const init = await (await fetch(`${t.url}/docs/init.js`)).text();
    expect(init).to.include('/api/messenger/v1/openapi.json').and.include('validatorUrl: null');
    const bundle = await fetch(`${t.url}/docs/assets/swagger-ui-bundle.js`);
    expect(bundle.status).to.equal(200);
    expect(Number(bundle.headers.get('content-length'))).to.be.greaterThan(100_000);
    expect((await fetch(`${t.url}/docs/assets/package.json`)).status).to.equal(404);
  });
});
