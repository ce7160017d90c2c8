import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadApiConfig } from '../../src/config.js';
import { ADMIN_BASE, API_BASE, buildAdminOpenApi, buildOpenApi } from '../../src/openapi/document.js';

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
};
type Response = { content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> };

/** Statuses any request may get without reaching an operation (unknown path or method, parser, guard). */
const UNROUTED = new Set([400, 401, 404, 405, 408, 413, 429, 431, 503]);
const CHECKED = /^(\/api\/messenger\/v1(\/.*)?|\/api\/cloud\/v1(\/.*)?|\/healthz|\/readyz)$/;
/** The admin API's paths: checked against the admin document. */
const ADMIN_CHECKED = /^\/api\/admin\/v1(\/.*)?$/;

type Checker = { doc: Doc; ajv: Ajv2020; routes: { re: RegExp; path: string }[] };
const cached: Partial<Record<'api' | 'admin', Checker>> = {};

function setup(which: 'api' | 'admin' = 'api'): Checker {
  const done = cached[which];
  if (done) return done;
  const config = loadApiConfig({ ...process.env, NODE_ENV: 'test' });
  const doc = (which === 'api' ? buildOpenApi(config) : buildAdminOpenApi(config)) as unknown as Doc;
  // strict off: the document holds OpenAPI fields besides its schemas (they are reached by pointer).
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc as object, 'openapi.json');
  // A literal path (`/groups/join`) wins over a template that also matches it (`/groups/{id}`).
  const routes = Object.keys(doc.paths)
    .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')))
    .map((path) => ({
      path,
      re: new RegExp(`^${path.replace(/\{[^/]+\}/g, '[^/]+')}$`),
    }));
  return (cached[which] = { doc, ajv, routes });
}

const validators = new Map<string, ValidateFunction>();
function validatorFor(which: 'api' | 'admin', pointer: string): ValidateFunction {
  let v = validators.get(`${which}:${pointer}`);
  if (!v) {
    v = setup(which).ajv.compile({ $ref: `openapi.json#${pointer}` });
    validators.set(`${which}:${pointer}`, v);
  }
  return v;
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Checks one answer of the public API against the OpenAPI document, or of the admin API against
 * the admin document: its status must be documented for the operation and its JSON body must
 * match that response's schema; a request that reaches no operation (unknown path or method) must
 * get an error status and the error envelope. Returns the problem, or undefined when the answer is
 * as documented.
 */
export function openApiProblem(
  url: string,
  method: string,
  status: number,
  body: unknown,
  headers: Headers,
): string | undefined {
  // A path for a named device (`x-device-path`) is the operation's path with the prefix taken off;
  // any of them may answer 404 for a device the token may not act on (the document says so there).
  const original = new URL(url).pathname;
  const admin = ADMIN_CHECKED.test(original);
  const pathname = admin
    ? original
    : original.replace(/^(\/api\/messenger\/v1)\/devices\/[^/]+(?=\/.)/, '$1');
  if (!admin && !CHECKED.test(pathname)) return undefined;
  const which = admin ? 'admin' : 'api';
  const deviceRefused = pathname !== original && status === 404;
  const { doc, routes } = setup(which);
  const route = routes.find((r) => r.re.test(pathname));
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const operation = route ? doc.paths[route.path]?.[verb] : undefined;
  const where = `${method} ${pathname} -> ${status}`;
  let pointer: string;
  if (!operation || deviceRefused) {
    if (!UNROUTED.has(status))
      return `${where}: no operation, and ${status} is not an error any path may answer`;
    pointer = '/components/schemas/Error';
  } else {
    const response = operation.responses[String(status)];
    if (!response) return `${where}: status ${status} is not documented for this operation`;
    if (!response.content?.['application/json']) return undefined;
    pointer = `/paths/${escape(route!.path)}/${verb}/responses/${status}/content/application~1json/schema`;
    for (const name of Object.keys(response.headers ?? {})) {
      const value = headers.get(name);
      if (name.startsWith('X-RateLimit') && value !== null && !/^\d+$/.test(value))
        return `${where}: header ${name} is not an integer: ${value}`;
    }
  }
  if (method.toUpperCase() === 'HEAD') return undefined;
  const validate = validatorFor(which, pointer);
  if (!validate(body)) {
    return `${where}: the body does not match the ${admin ? 'admin ' : ''}document: ${setup(which).ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`;
  }
  return undefined;
}

export { ADMIN_BASE, API_BASE };
