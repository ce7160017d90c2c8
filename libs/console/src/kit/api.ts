/** The admin API as the page uses it: same origin, the session cookie, the CSRF token on changes. */

import type { components, paths } from './admin-schema.js';

export const ADMIN_BASE = '/api/admin/v1';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => undefined;

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Called when any call answers 401: the session is gone (expired, signed out elsewhere). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export async function api<T = Record<string, unknown>>(
  path: string,
  opts: { method?: string; json?: unknown } = {},
): Promise<T> {
  const method = opts.method ?? (opts.json === undefined ? 'GET' : 'POST');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(`${ADMIN_BASE}${path}`, {
      method,
      headers,
      body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiFailure(0, 'The gateway cannot be reached. Check your connection.', {});
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.status === 401 && path !== '/session') onSignedOut();
  if (!res.ok || body.success === false) {
    throw new ApiFailure(res.status, describe(res.status, body), body);
  }
  return body as T;
}

function describe(status: number, body: Record<string, unknown>): string {
  const error = typeof body.error === 'string' ? body.error : `HTTP ${status}`;
  const details = Array.isArray(body.details)
    ? (body.details as { message?: string }[]).map((d) => d.message).filter(Boolean)
    : [];
  const wait = typeof body.resetIn === 'number' ? ` Try again in ${body.resetIn} s.` : '';
  return details.length > 0 ? `${error}: ${details.join('; ')}` : `${error}.${wait}`.replace('..', '.');
}

// --- shapes of the admin API ------------------------------------------------------------------
//
// The answers' types come from the admin API's OpenAPI document (services/api buildAdminOpenApi),
// generated into admin-schema.d.ts (`npm run -w @mgw/console generate`; a drift test keeps it so).
// The API's tests check every admin answer against that document, so these are what it answers.

type Schemas = components['schemas'];
/** The keys of any member of a union of objects. */
type KeysOf<U> = U extends unknown ? keyof U : never;
/** A union of objects as one: the fields all members have, then the others' as optional. */
type Flat<U> = { [K in keyof U]: U[K] } & {
  [K in Exclude<KeysOf<U>, keyof U>]?: U extends unknown ? (K extends keyof U ? U[K] : never) : never;
};
/** The JSON body of an operation's success answer, without its `success: true`. */
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: Record<S, { content: { 'application/json': infer B } }>;
}
  ? Omit<B, 'success'>
  : never;
/** The JSON body an operation takes. */
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type ConnectionStatus = Device['status'];

export type Device = Schemas['AdminDevice'];

/** `linked` (QR or pairing code) or `cloud` (a number of WhatsApp's Cloud API, docs/cloud-api.md). */
export type DeviceEngine = Device['engine'];

/** A Cloud API device as GET and PUT /devices/:deviceId/cloud show it: never a secret. */
export type CloudDevice = Schemas['CloudDevice'];

/** What the number said of itself when last checked with the Graph API (PUT /cloud, /connect). */
export type CloudNumberProfile = Schemas['CloudNumberProfile'];

/** PUT /devices/:deviceId/cloud's body: the two ids, the three secrets, the settings with a default. */
export type CloudDeviceInput = Body<'/api/admin/v1/devices/{deviceId}/cloud', 'put'>;

/** GET /devices/:deviceId/cloud/templates: the number's message templates, and when Meta was asked. */
export type CloudTemplates = Schemas['CloudTemplates'];

/** One message template of a Cloud API number, as it is shown (its texts are the business's, not secret). */
export type CloudTemplate = Schemas['CloudTemplate'];

export type CloudTemplateComponent = Schemas['CloudTemplateComponent'];

export type DeviceHealth = Schemas['DeviceHealth'];

export type Sending = Schemas['AdminSending'];

/** GET /devices/:deviceId/policy: the overrides (what differs from the defaults) and what is in force. */
export type PolicyAnswer = Answer<'/api/admin/v1/devices/{deviceId}/policy', 'get'>;

export type PolicyOverrides = PolicyAnswer['overrides'];

export type Webhook = Schemas['Webhook'];

/** A device's proxy as the admin API shows it: where it is, never its credentials. */
export type DeviceProxyUrl = Extract<Schemas['AdminDeviceProxy'], { url: string }> & { direct?: undefined };

/** A device's own proxy setting: a proxy, or directly (past DEVICE_PROXY_URL); `direct` tells them apart. */
export type DeviceProxy = DeviceProxyUrl | Extract<Schemas['AdminDeviceProxy'], { direct: true }>;

export type Pairing = Schemas['AdminPairing'];

/** Where a passkey-gated link stands (docs/passkeys.md). */
export type PasskeyStep = PasskeyView['step'];

/**
 * GET /devices/:deviceId/connect/passkey: the request, and from `confirm_code` on the phone's code.
 * `requestOptions` is WhatsApp's (the document says only "an object").
 */
export type PasskeyView = Omit<Schemas['PasskeyView'], 'requestOptions'> & {
  requestOptions: Record<string, unknown>;
};

export type Token = Schemas['AdminToken'];

/** A pool device's standing (`GET /pools`): its status, and its health score when linked. */
export type PoolDeviceState = Schemas['AdminPoolDeviceState'];

/** A pool: a named set of devices one batch is spread over (docs/pools.md). */
export type Pool = Schemas['AdminPool'];

export type MessageStatus = Message['status'];

type AdminMessage = Schemas['AdminMessage'];
type Poll = NonNullable<AdminMessage['poll']>;

/**
 * A message as the Messages and Chats pages show it. Its attachment (a contact's, or what we
 * sent) and its group (named by a contact's message, or only its id) are each one shape with the
 * other's fields optional; a poll's tally is the document's list (a screen still reads an older
 * per-option object too).
 */
export type Message = Omit<AdminMessage, 'attachment' | 'chat' | 'poll'> & {
  attachment?: Flat<NonNullable<AdminMessage['attachment']>>;
  chat?: Flat<NonNullable<AdminMessage['chat']>>;
  poll?: Omit<Poll, 'tally'> & { tally?: Poll['tally'] | Record<string, number> };
};

export type Batch = Schemas['AdminBatchCounts'];

/** A batch's state (`GET /devices/:deviceId/batches`): what its control buttons can do. */
export type BatchState = DeviceBatch['state'];

/** Why a queued message waits (`held.reason` of a record; docs/batches.md "Held messages"). */
export type HeldReason = NonNullable<Schemas['AdminDeviceBatch']['heldReasons']>[number]['reason'];

/** A batch as the Batches page lists it: its counts by status (plus `held`). */
export type DeviceBatch = Schemas['AdminDeviceBatch'];

/** GET /devices/:deviceId/batches `data`: newest first, and the cursor of the next page. */
export type DeviceBatchPage = Omit<Schemas['AdminDeviceBatchPage'], 'batches'> & { batches: DeviceBatch[] };

/** The statuses the Batches page's chart counts per hour (`GET /devices/:deviceId/activity`). */
export type ActivityStatus = keyof Schemas['AdminActivityTotals'];

/** One UTC hour of a device's sending: `hour` is its start (ISO), the counts what happened in it. */
export type ActivityHour = Schemas['AdminActivityHour'];

/** GET /devices/:deviceId/activity: the last hours, oldest first, zero-filled, and their totals. */
export type ActivityAnswer = Answer<'/api/admin/v1/devices/{deviceId}/activity', 'get'>;

/** Who is signed in: the operator (every workspace), or a workspace's admin or agent. */
export type Role = Schemas['AdminSession']['role'];

/** Who is signed in; `role` may be absent on a session the page has not read yet (the operator). */
export type Session = Omit<Schemas['AdminSession'], 'success' | 'role'> & { role?: Role };

/** The quotas of a workspace: absent, no limit (docs/workspaces.md). */
export type Quotas = Workspace['quotas'];
export type QuotaName = keyof Quotas;

/** A workspace as the admin API shows it, with how many devices it owns. */
export type Workspace = Schemas['Workspace'];

/** The counts of a workspace's UTC day (GET /workspaces/:id/usage). */
export const USAGE_COUNTS = [
  'accepted',
  'otp',
  'sent',
  'delivered',
  'read',
  'failed',
  'received',
  'mediaBytes',
] as const satisfies readonly (keyof Schemas['UsageCounts'])[];
export type UsageCount = (typeof USAGE_COUNTS)[number];
export type UsageDay = Schemas['UsageDay'];

/** GET /workspaces/:id/usage `usage`: the days of the range, oldest first, and their sums. */
export type Usage = Schemas['WorkspaceUsage'];

/** A person who signs in to a workspace's console (its workspace and last change as the API answers them). */
export type WorkspaceUser = Omit<Schemas['AdminConsoleUser'], 'workspace' | 'updatedAt'> &
  Partial<Pick<Schemas['AdminConsoleUser'], 'workspace' | 'updatedAt'>>;
