import type { JsonResponse, TestApi } from './api.js';
import { call, startApi, type ConfigOverrides } from './api.js';

export const ADMIN_PASSWORD = 'correct horse battery staple';
export const ADMIN_API_TOKEN = 'admin-automation-token-0123456789abcdef';

/** The API with the dashboard on (a password) and the automation token set. */
export function startAdminApi(overrides: ConfigOverrides = {}): Promise<TestApi> {
  return startApi({
    admin: {
      password: ADMIN_PASSWORD,
      apiToken: ADMIN_API_TOKEN,
      sessionTtlSeconds: 3600,
      signInLimit: 1000,
      signInWindowMs: 60_000,
    },
    ...overrides,
  });
}

/** A signed-in dashboard: its cookie and CSRF token go with every call, as the page sends them. */
export interface AdminSessionClient {
  cookie: string;
  csrfToken: string;
  call(path: string, opts?: { method?: string; json?: unknown; csrf?: boolean }): Promise<JsonResponse>;
}

/** Signs in as the operator (the password alone) or, with `user`, as a workspace's console user. */
export async function signIn(
  t: TestApi,
  password = ADMIN_PASSWORD,
  user?: string,
): Promise<AdminSessionClient> {
  const res = await call(`${t.url}/api/admin/v1/session`, {
    json: user === undefined ? { password } : { user, password },
  });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrfToken = String(res.body.csrfToken);
  return {
    cookie,
    csrfToken,
    call: (path, opts = {}) =>
      call(`${t.url}/api/admin/v1${path}`, {
        method: opts.method,
        json: opts.json,
        headers: { cookie, ...(opts.csrf === false ? {} : { 'x-csrf-token': csrfToken }) },
      }),
  };
}

/** The admin API with the automation token. */
export function adminCall(
  t: TestApi,
  path: string,
  opts: { method?: string; json?: unknown; token?: string } = {},
): Promise<JsonResponse> {
  return call(`${t.url}/api/admin/v1${path}`, {
    method: opts.method,
    json: opts.json,
    token: opts.token ?? ADMIN_API_TOKEN,
  });
}
