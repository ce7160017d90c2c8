import { expect } from 'chai';
import { Agent, request } from 'node:http';
import { ERRORS } from '@mgw/contracts';
import { ADMIN_BASE, API_BASE, type RouteSpec } from '../route-table.js';
import { adminRoutes, apiRoutes, GUARD_ERRORS, spellsARoute, variantsOf } from './path-variants.js';
import {
  startMatrixWorld,
  type Answer,
  type Caller,
  type DeviceForm,
  type Ids,
  type MatrixWorld,
} from './matrix-world.js';
import { call, type TestApi } from '../../../test/helpers/api.js';

/**
 * The attacker's matrix (docs/security.md, "One reading of a path"): every route of both APIs,
 * taken from the route table so that a route added later is in it without touching this file, ×
 * every kind of caller × the forms of its path — the contract's, under a device prefix (the
 * caller's own device, another workspace's, an id no device could have) or with another
 * workspace's ids, and the variants an attacker tries (letter case in each segment,
 * percent-encoded letters and slashes, doubled and trailing slashes, dot segments, matrix
 * parameters, an overlong segment, Unicode look-alikes). The expected answer is worked out here
 * from the documentation's rules, not from the code's tables: a test written from the code's own
 * picture would share its holes (a device token reached the workspace routes by writing `Tokens`).
 *
 * An allowed call is sent as a probe that the route's body stage refuses (a body of the wrong type,
 * or a body where none is taken), so nothing is created, changed or deleted by the matrix; a GET is
 * a read. Another workspace's state is compared before and after.
 */

/** The request and its answer: status and the error string (a stream is closed once its head arrives). */
interface Sent {
  status: number;
  error?: string;
}

describe('Security: the attacker matrix over every route of both APIs', function () {
  this.timeout(900_000);
  let t: TestApi;
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  let requests = 0;
  let callers: Caller[];
  let snapshotB: unknown;
  function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Sent> {
    requests += 1;
    const { port } = new URL(t.url);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent,
          host: '127.0.0.1',
          port,
          method,
          path,
          headers: {
            ...headers,
            ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
          },
        },
        (res) => {
          const type = String(res.headers['content-type'] ?? '');
          if (type.startsWith('text/event-stream')) {
            res.destroy();
            return resolve({ status: res.statusCode ?? 0 });
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let error: string | undefined;
            try {
              error = (JSON.parse(text) as { error?: string }).error;
            } catch {
              error = undefined;
            }
            resolve({ status: res.statusCode ?? 0, error });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /**
   * A call the route's body stage refuses when it gets that far: a JSON route gets text, a route
   * that takes no body gets one, the upload a type that is no MIME type; a GET is sent as it is.
   */
  function probe(route: RouteSpec): { headers: Record<string, string>; body?: string } {
    const spec = typeof route.body === 'function' ? route.body(t.config) : route.body;
    if (spec === 'none') return { headers: { 'content-type': 'application/json' }, body: '{}' };
    if (spec && 'raw' in spec) return { headers: { 'content-type': 'not a type' }, body: 'x' };
    if (spec || route.method !== 'get') return { headers: { 'content-type': 'text/plain' }, body: 'x' };
    return { headers: {} };
  }

  /** A route's path with its ids: the device, pool, workspace and user given, any other id a look-alike of one. */
  function concrete(path: string, ids: Ids): string {
    return path.replace(/:(\w+)/g, (_m, name: string) => {
      if (name === 'deviceId') return ids.device;
      if (name === 'poolId') return ids.pool;
      if (name === 'workspaceId') return ids.workspace;
      if (name === 'user') return ids.user;
      if (/number|phone/i.test(name)) return '15550009999';
      return /messageId|^id$|batchId/.test(name) ? '3EB0AAAAAAAAAAAAAAAAAAAA' : 'x1';
    });
  }

  /**
   * Runs the calls twelve at a time; the failures grouped by what went wrong (the caller, the form
   * or variant, the expected and the actual answer), each group with its count and one example.
   */
  async function runAll(jobs: (() => Promise<string | undefined>)[]): Promise<string[]> {
    const failures: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const failure = await jobs[next++]!();
        if (failure) failures.push(failure);
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
    const groups = new Map<string, { count: number; example: string }>();
    for (const failure of failures) {
      const [where, what] = failure.split(' => ') as [string, string];
      const key = `${where.replace(/ (GET|POST|PUT|PATCH|DELETE) \S+/, '')} => ${what}`;
      const group = groups.get(key) ?? { count: 0, example: where };
      group.count += 1;
      groups.set(key, group);
    }
    return [...groups].map(([key, g]) => `${g.count} × ${key}\n      e.g. ${g.example}`);
  }

  const verdict = (where: string, got: Sent, want: Answer): string | undefined => {
    if (want === 'served') {
      const refused = got.status === 401 || got.status === 403 || (got.error && GUARD_ERRORS.has(got.error));
      return refused || got.status >= 500
        ? `${where} => expected to be served, got ${got.status} ${got.error}`
        : undefined;
    }
    return got.status === want.status && got.error === want.error
      ? undefined
      : `${where} => expected ${want.status} ${want.error}, got ${got.status} ${got.error}`;
  };

  let world: MatrixWorld;
  before(async () => {
    world = await startMatrixWorld();
    ({ t, callers } = world);
    snapshotB = await world.stateOfB();
  });
  after(async () => {
    agent.destroy();
    await t?.close();
  });

  it('When every caller calls every public route in its contract form and under each device prefix, then each answer is the documented one', async () => {
    const forms: [DeviceForm, (c: Caller) => string][] = [
      ['plain', () => ''],
      ['own', (c) => `/devices/${c.own.device}`],
      ['foreign', (c) => `/devices/${c.foreign.device}`],
      ['invalid', () => '/devices/No-Such_ID!'],
    ];
    const jobs = apiRoutes.flatMap((route) =>
      callers.flatMap((caller) =>
        forms.map(([form, prefix]) => async () => {
          const { headers, body } = probe(route);
          const path = `${API_BASE}${prefix(caller)}${concrete(route.path, caller.own)}`;
          const got = await send(route.method.toUpperCase(), path, { ...caller.headers, ...headers }, body);
          return verdict(
            `${caller.name} (${form}): ${route.method.toUpperCase()} ${path}`,
            got,
            caller.api!(route, form),
          );
        }),
      ),
    );
    const failures = await runAll(jobs);
    expect(
      failures,
      `${failures.length} of ${jobs.length}:\n${failures.slice(0, 60).join('\n')}`,
    ).to.deep.equal([]);
    expect(apiRoutes.length, 'the public routes of the table').to.be.greaterThan(80);
  });

  it("When every caller calls every admin route with its own ids and with another workspace's, then each answer is the documented one", async () => {
    const jobs = adminRoutes.flatMap((route) =>
      callers.flatMap((caller) =>
        (['own', 'foreign'] as const).map((ids) => async () => {
          const { headers, body } = probe(route);
          const path = `${ADMIN_BASE}${concrete(route.path, ids === 'own' ? caller.own : caller.foreign)}`;
          const got = await send(route.method.toUpperCase(), path, { ...caller.headers, ...headers }, body);
          return verdict(
            `${caller.name} (${ids} ids): ${route.method.toUpperCase()} ${path}`,
            got,
            caller.admin!(route, ids),
          );
        }),
      ),
    );
    const failures = await runAll(jobs);
    expect(
      failures,
      `${failures.length} of ${jobs.length}:\n${failures.slice(0, 60).join('\n')}`,
    ).to.deep.equal([]);
    expect(adminRoutes.length, 'the admin routes of the table').to.be.greaterThan(80);
  });

  it('When every caller calls every route of both APIs by a path that is not its canonical form, then each is answered as a path that does not exist, credentials first', async () => {
    const jobs: (() => Promise<string | undefined>)[] = [];
    for (const route of [...apiRoutes, ...adminRoutes]) {
      const admin = route.surface === 'admin';
      const base = admin ? ADMIN_BASE : API_BASE;
      // The answer to a path that does not exist depends only on the credentials: one caller of each kind.
      for (const caller of callers.filter(
        (c) => (admin ? c.forVariants !== 'api' : c.forVariants !== 'admin') && c.forVariants !== false,
      )) {
        const contract = `${base}${concrete(route.path, caller.own)}`;
        const baseSegments = base.split('/').length - 1;
        const templ = route.path.slice(1).split('/');
        const literal = (i: number) => i < baseSegments || !templ[i - baseSegments]!.startsWith(':');
        const shapes: [string, string][] = variantsOf(contract, literal);
        if (!admin) {
          // The device prefix's own literal segment, in capitals, and an encoded slash inside it.
          const own = `${API_BASE}/devices/${caller.own.device}${concrete(route.path, caller.own)}`;
          shapes.push(['prefix "Devices"', own.replace('/devices/', '/Devices/')]);
          shapes.push([
            'prefix with an encoded slash',
            own.replace(`/devices/${caller.own.device}/`, `/devices%2F${caller.own.device}/`),
          ]);
        }
        for (const [variant, path] of shapes) {
          if (spellsARoute(path, admin)) continue;
          jobs.push(async () => {
            const { headers, body } = probe(route);
            const got = await send(route.method.toUpperCase(), path, { ...caller.headers, ...headers }, body);
            const missing = admin ? caller.adminMissing : caller.apiMissing;
            // Escapes that are not UTF-8 are named once the credentials pass (docs/api.md).
            const want =
              variant.startsWith('overlong UTF-8') && missing.status === 404
                ? { status: 400, error: ERRORS.invalidRequest }
                : missing;
            return verdict(
              `${caller.name} (${variant.replace(/"[^"]*"/, 'a segment')}): ${route.method.toUpperCase()} ${path.slice(0, 120)}`,
              got,
              want,
            );
          });
        }
      }
    }
    const failures = await runAll(jobs);
    expect(
      failures,
      `${failures.length} of ${jobs.length}:\n${failures.slice(0, 60).join('\n')}`,
    ).to.deep.equal([]);
  });

  it("When the matrix has run, then the other workspace's state is unchanged, and the matrix says how many requests it made", async () => {
    expect(await world.stateOfB()).to.deep.equal(snapshotB);
    // The count, for the record (docs/security.md quotes it).
    console.log(
      `      attacker matrix: ${requests} requests, ${callers.length} callers, ${apiRoutes.length} + ${adminRoutes.length} routes`,
    );
    expect(requests).to.be.greaterThan(40_000);
    expect((await call(`${t.api}/devices/${world.devices.b}/status`, { token: undefined })).status).to.equal(
      401,
    );
  });
});
