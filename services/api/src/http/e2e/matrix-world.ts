import { randomBytes } from 'node:crypto';
import { ERRORS } from '@mgw/contracts';
import { ADMIN_ERRORS } from '../admin-errors.js';
import type { AdminRoute, ApiRoute } from '../route-table.js';
import { isWorkspaceRow, POOL_PATHS, rowKey } from './path-variants.js';
import { markConnected, type TestApi } from '../../../test/helpers/api.js';
import {
  ADMIN_API_TOKEN,
  ADMIN_PASSWORD,
  adminCall,
  signIn,
  startAdminApi,
} from '../../../test/helpers/admin.js';

/**
 * The attacker matrix's world (attacker-matrix.test.ts): one API, three workspaces (A and B, and
 * C suspended) with devices, pools and console users, and every kind of caller with the answers
 * the documentation gives it (docs/workspaces.md "Tokens", "The console"; docs/pools.md).
 */

export type Answer = { status: number; error: string } | 'served';

export interface Caller {
  name: string;
  /** Whether the variants are tried with this caller: one caller of each kind of credential. */
  forVariants: 'api' | 'admin' | 'both' | false;
  /** What the API answers a request of this caller to a path that does not exist. */
  apiMissing: { status: number; error: string };
  adminMissing: { status: number; error: string };
  headers: Record<string, string>;
  /** The API's decision for a route and a path form (undefined: not an API caller → 401). */
  api?: (route: ApiRoute, form: DeviceForm) => Answer;
  /** The admin API's decision for a route, its ids the caller's own or another workspace's. */
  admin?: (route: AdminRoute, ids: 'own' | 'foreign') => Answer;
  /** The ids that are this caller's own (its device, pool, workspace, user). */
  own: Ids;
  foreign: Ids;
}

export interface Ids {
  workspace: string;
  device: string;
  pool: string;
  user: string;
}

/** How a public path names its device: not at all, its own, another workspace's, one no device could have. */
export type DeviceForm = 'plain' | 'own' | 'foreign' | 'invalid';

const INVALID_TOKEN = { status: 401, error: ERRORS.invalidToken };
const ADMIN_401 = { status: 401, error: ADMIN_ERRORS.unauthenticated };
const NOT_FOUND = { status: 404, error: ERRORS.notFound };
const DEVICE_NOT_FOUND = { status: 404, error: ERRORS.deviceNotFound };
const SUSPENDED = { status: 403, error: ERRORS.workspaceSuspended };
const WORKSPACE_ONLY = { status: 403, error: ERRORS.workspaceTokenRequired };
const NOT_FOR_POOLS = { status: 403, error: ERRORS.poolTokenNotAllowed };
const NAME_THE_DEVICE = { status: 400, error: ERRORS.deviceNotNamed };

export interface MatrixWorld {
  t: TestApi;
  callers: Caller[];
  devices: Record<string, string>;
  /** What an outsider must never change: workspace B's record, devices, users, pool, tokens, session. */
  stateOfB(): Promise<unknown>;
}

export async function startMatrixWorld(): Promise<MatrixWorld> {
  // Limits out of the way: the matrix makes tens of thousands of calls with a few tokens.
  const t = await startAdminApi({
    authFailureLimit: 1_000_000_000,
    rateLimits: Object.fromEntries(
      [
        'connect',
        'disconnect',
        'status',
        'send',
        'otp',
        'messages',
        'webhook',
        'contacts',
        'groups',
        'media',
        'account',
        'broadcasts',
      ].map((k) => [k, 1_000_000_000]),
    ),
    admin: {
      password: ADMIN_PASSWORD,
      apiToken: ADMIN_API_TOKEN,
      sessionTtlSeconds: 3600,
      signInLimit: 1_000_000_000,
      signInWindowMs: 60_000,
    },
  } as never);
  const id = (prefix: string) => `${prefix}${randomBytes(3).toString('hex')}`;
  const [wa, wb, wc] = [id('mxa'), id('mxb'), id('mxc')];
  const devices: Record<string, string> = {};
  const pools = { a: id('pa'), b: id('pb') };
  const users = {
    adminA: `${wa}.admin`,
    agentA: `${wa}.agent`,
    adminB: `${wb}.admin`,
    adminC: `${wc}.admin`,
  };
  const USER_PASSWORD = 'a long enough console password';
  const callers: Caller[] = [];

  async function stateOfB(): Promise<unknown> {
    const read = async (path: string) => (await adminCall(t, path)).body;
    return {
      workspace: await read(`/workspaces/${wb}`),
      devices: await read(`/workspaces/${wb}/devices`),
      users: await read(`/workspaces/${wb}/users`),
      pool: await read(`/pools/${pools.b}`),
      tokens: ((await read('/tokens')).tokens as { id: string; workspace?: string; lastUsedAt?: string }[])
        .filter((x) => x.workspace === wb)
        .map(({ lastUsedAt: _used, ...rest }) => rest),
      session: await t.redis.hgetall(`mgw:{${devices.b!}}:session`),
    };
  }

  const must = async (res: Promise<{ status: number; body: Record<string, unknown> }>, status: number) => {
    const r = await res;
    if (r.status !== status) throw new Error(`setup: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  for (const w of [wa, wb, wc])
    await must(adminCall(t, '/workspaces', { method: 'POST', json: { id: w, name: w } }), 201);
  for (const [key, w] of [
    ['a', wa],
    ['a2', wa],
    ['b', wb],
    ['c', wc],
  ] as const) {
    const made = await must(adminCall(t, `/workspaces/${w}/devices`, { method: 'POST' }), 201);
    devices[key] = (made.device as { deviceId: string }).deviceId;
    await markConnected(t.redis, devices[key]!);
  }
  await markConnected(t.redis, t.config.defaultDeviceId);
  for (const [pool, w, devs] of [
    [pools.a, wa, [devices.a!, devices.a2!]],
    [pools.b, wb, [devices.b!]],
  ] as const)
    await must(
      adminCall(t, '/pools', {
        method: 'POST',
        json: { id: pool, name: pool, devices: devs, workspace: w },
      }),
      201,
    );
  const mint = async (w: string, json: Record<string, unknown>) =>
    (
      await must(
        adminCall(t, `/workspaces/${w}/tokens`, { method: 'POST', json: { name: 'm', ...json } }),
        201,
      )
    ).value as string;
  for (const [user, w, role] of [
    [users.adminA, wa, 'admin'],
    [users.agentA, wa, 'agent'],
    [users.adminB, wb, 'admin'],
    [users.adminC, wc, 'admin'],
  ] as const)
    await must(
      adminCall(t, `/workspaces/${w}/users`, {
        method: 'POST',
        json: { user, password: USER_PASSWORD, role },
      }),
      201,
    );

  const deviceA = await mint(wa, { deviceId: devices.a });
  const poolA = await mint(wa, { poolId: pools.a });
  const workspaceA = await mint(wa, {});
  const workspaceB = await mint(wb, {});
  const defaultWorkspace = await mint('default', {});
  const legacy = (await t.services.tokens.create({ name: 'from before workspaces' })).value;
  const revoked = await t.services.tokens.create({ name: 'revoked', workspaceId: wa, deviceId: devices.a });
  await t.services.tokens.revoke(revoked.token.id);
  const expired = await t.services.tokens.create({
    name: 'expired',
    workspaceId: wa,
    expiresInMs: 1000,
    now: new Date(Date.now() - 60_000),
  });
  const suspendedWorkspace = await mint(wc, {});
  const suspendedDevice = await mint(wc, { deviceId: devices.c });
  const sessionAdminA = await signIn(t, USER_PASSWORD, users.adminA);
  const sessionAgentA = await signIn(t, USER_PASSWORD, users.agentA);
  const sessionAdminB = await signIn(t, USER_PASSWORD, users.adminB);
  const sessionAdminC = await signIn(t, USER_PASSWORD, users.adminC);
  const viewing = await signIn(t);
  await must(viewing.call('/session/workspace', { method: 'PUT', json: { workspaceId: wa } }), 200);
  await must(adminCall(t, `/workspaces/${wc}`, { method: 'PATCH', json: { status: 'suspended' } }), 200);

  const idsA: Ids = { workspace: wa, device: devices.a!, pool: pools.a, user: users.agentA };
  const idsB: Ids = { workspace: wb, device: devices.b!, pool: pools.b, user: users.adminB };
  const idsDefault: Ids = {
    workspace: 'default',
    device: t.config.defaultDeviceId,
    pool: 'nopool',
    user: 'nouser',
  };
  const bearer = (v: string) => ({ authorization: `Bearer ${v}` });
  const session = (s: { cookie: string; csrfToken: string }) => ({
    cookie: s.cookie,
    'x-csrf-token': s.csrfToken,
  });

  /** A named device: the caller's own, another's or an impossible id; a token that acts on one device. */
  const oneDevice =
    (workspaceRoutes: 'refused') =>
    (route: ApiRoute, form: DeviceForm): Answer => {
      if (form === 'foreign' || form === 'invalid') return DEVICE_NOT_FOUND;
      return workspaceRoutes === 'refused' && isWorkspaceRow(route) ? WORKSPACE_ONLY : 'served';
    };
  const workspaceToken =
    (isDefault: boolean) =>
    (route: ApiRoute, form: DeviceForm): Answer => {
      if (form === 'foreign' || form === 'invalid') return DEVICE_NOT_FOUND;
      if (form === 'own' || isWorkspaceRow(route) || isDefault) return 'served';
      return NAME_THE_DEVICE;
    };
  const pool = (route: ApiRoute, form: DeviceForm): Answer => {
    if (form !== 'plain') return DEVICE_NOT_FOUND;
    return POOL_PATHS.has(rowKey(route)) ? 'served' : NOT_FOR_POOLS;
  };
  /** A console session: the row's `console` first, then the path's ids (docs/workspaces.md "The console"). */
  const consoleUser =
    (role: 'admin' | 'agent', suspended = false) =>
    (route: AdminRoute, ids: 'own' | 'foreign'): Answer => {
      if (route.console === 'session') return 'served';
      if (!route.console) return NOT_FOUND;
      if (suspended) return SUSPENDED;
      if (route.console === 'admin' && role !== 'admin')
        return { status: 403, error: ADMIN_ERRORS.roleCannot };
      if (ids === 'foreign') {
        if (route.path.includes(':workspaceId'))
          return { status: 404, error: ADMIN_ERRORS.workspaceNotFound };
        if (route.path.includes(':deviceId')) return { status: 404, error: ADMIN_ERRORS.deviceNotFound };
        if (route.path.includes(':poolId')) return { status: 404, error: ADMIN_ERRORS.poolNotFound };
      }
      return 'served';
    };
  const apiOnly = { adminMissing: ADMIN_401, admin: () => ADMIN_401 };
  const noApi = { apiMissing: INVALID_TOKEN, api: () => INVALID_TOKEN };
  callers.push(
    {
      name: 'no credentials',
      forVariants: 'both',
      headers: {},
      ...noApi,
      adminMissing: ADMIN_401,
      admin: () => ADMIN_401,
      own: idsA,
      foreign: idsB,
    },
    {
      name: 'an unknown token',
      forVariants: 'api',
      headers: bearer('mgw_not-a-token-of-anyone'),
      ...noApi,
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: 'a revoked device token',
      forVariants: false,
      headers: bearer(revoked.value),
      ...noApi,
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: 'an expired workspace token',
      forVariants: false,
      headers: bearer(expired.value),
      ...noApi,
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: "A's device token",
      forVariants: 'api',
      headers: bearer(deviceA),
      apiMissing: NOT_FOUND,
      api: oneDevice('refused'),
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: "A's pool token",
      forVariants: 'api',
      headers: bearer(poolA),
      apiMissing: NOT_FOUND,
      api: pool,
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: "A's workspace token",
      forVariants: 'api',
      headers: bearer(workspaceA),
      apiMissing: NOT_FOUND,
      api: workspaceToken(false),
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: "B's workspace token",
      forVariants: false,
      headers: bearer(workspaceB),
      apiMissing: NOT_FOUND,
      api: workspaceToken(false),
      ...apiOnly,
      own: idsB,
      foreign: idsA,
    },
    {
      name: "default's workspace token",
      forVariants: false,
      headers: bearer(defaultWorkspace),
      apiMissing: NOT_FOUND,
      api: workspaceToken(true),
      ...apiOnly,
      own: idsDefault,
      foreign: idsA,
    },
    {
      name: 'a token from before workspaces',
      forVariants: 'api',
      headers: bearer(legacy),
      apiMissing: NOT_FOUND,
      api: oneDevice('refused'),
      ...apiOnly,
      own: idsDefault,
      foreign: idsA,
    },
    {
      name: "suspended C's workspace token",
      forVariants: 'api',
      headers: bearer(suspendedWorkspace),
      apiMissing: SUSPENDED,
      api: () => SUSPENDED,
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: "suspended C's device token",
      forVariants: false,
      headers: bearer(suspendedDevice),
      apiMissing: SUSPENDED,
      api: () => SUSPENDED,
      ...apiOnly,
      own: idsA,
      foreign: idsB,
    },
    {
      name: "A's console admin",
      forVariants: 'admin',
      headers: session(sessionAdminA),
      ...noApi,
      adminMissing: NOT_FOUND,
      admin: consoleUser('admin'),
      own: idsA,
      foreign: idsB,
    },
    {
      name: "A's console agent",
      forVariants: 'admin',
      headers: session(sessionAgentA),
      ...noApi,
      adminMissing: NOT_FOUND,
      admin: consoleUser('agent'),
      own: idsA,
      foreign: idsB,
    },
    {
      name: "B's console admin",
      forVariants: false,
      headers: session(sessionAdminB),
      ...noApi,
      adminMissing: NOT_FOUND,
      admin: consoleUser('admin'),
      own: idsB,
      foreign: idsA,
    },
    {
      name: "suspended C's console admin",
      forVariants: false,
      headers: session(sessionAdminC),
      ...noApi,
      adminMissing: NOT_FOUND,
      admin: consoleUser('admin', true),
      own: { ...idsA, workspace: wc, device: devices.c! },
      foreign: idsB,
    },
    {
      name: 'the operator viewing A',
      forVariants: 'admin',
      headers: session(viewing),
      ...noApi,
      adminMissing: NOT_FOUND,
      admin: consoleUser('admin'),
      own: idsA,
      foreign: idsB,
    },
    {
      name: "the operator's admin token",
      forVariants: 'admin',
      headers: bearer(ADMIN_API_TOKEN),
      ...noApi,
      adminMissing: NOT_FOUND,
      admin: () => 'served',
      own: idsA,
      foreign: idsB,
    },
  );
  return { t, callers, devices, stateOfB };
}
