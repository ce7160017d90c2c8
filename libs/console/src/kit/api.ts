/** The admin API as the page uses it: same origin, the session cookie, the CSRF token on changes. */

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

export type ConnectionStatus = 'connected' | 'connecting' | 'disconnected';

export interface Device {
  deviceId: string;
  status: ConnectionStatus;
  linked: boolean;
  phone?: string;
  name?: string;
  profilePic?: string;
  queued: number;
  updatedAt?: string;
  connectedAt?: string;
  lastDisconnectReason?: string;
  /** While connecting: the step of a passkey-gated link, if it waits on one. */
  passkeyStep?: PasskeyStep;
  /** Linked devices: today's usage of the sending policy and the pause, if WhatsApp pushed back. */
  sending?: Sending;
  /** Linked devices: the health score (0–100) and what cost it points, the costliest first. */
  health?: DeviceHealth;
}

export interface DeviceHealth {
  score: number;
  reasons: { code: string; penalty: number; message: string }[];
}

export interface Sending {
  sentToday: number;
  firstContactsToday: number;
  dailyCap: number | null;
  firstContactCap: number | null;
  warmupDay?: number;
  quietHours?: string;
  timeZone: string;
  restriction?: { reason: string; until: string; since: string };
  pausedUntil?: string;
}

/** GET /devices/:deviceId/policy: the overrides (what differs from the defaults) and what is in force. */
export interface PolicyAnswer {
  deviceId: string;
  overrides: PolicyOverrides;
  sending: Sending & { otpReserve: number; windowEndsAt: string };
}

export interface PolicyOverrides {
  dailyCap?: number;
  warmupCaps?: number[];
  firstContactCap?: number;
  otpReserve?: number;
  quietHours?: string;
  timeZone?: string;
  sendGapMs?: number;
  /** "typing…" before a paced text (default true). */
  typing?: boolean;
}

export interface Webhook {
  url: string;
  events: string[];
  createdAt: string;
  disabledAt?: string;
  disabledReason?: string;
  /** Only in the answer of the PUT that created or rotated it. */
  secret?: string;
}

/** A device's proxy as the admin API shows it: where it is, never its credentials. */
export interface DeviceProxyUrl {
  direct?: undefined;
  url: string;
  scheme: 'http' | 'socks5';
  host: string;
  port: number;
  hasCredentials: boolean;
  updatedAt: string;
}

/** A device's own proxy setting: a proxy, or directly (past DEVICE_PROXY_URL). */
export type DeviceProxy = DeviceProxyUrl | { direct: true; updatedAt: string };

export interface Pairing {
  state: 'starting' | 'showing' | 'failed' | 'paired';
  method: 'qrCode' | 'pairingCode';
  qr?: string;
  qrImage?: string;
  pairingCode?: string;
  reason?: string;
  /** A passkey-gated link: its step and when its request expires (no QR or code is shown then). */
  passkey?: { step: PasskeyStep; expiresAt: string };
}

/** Where a passkey-gated link stands (docs/passkeys.md). */
export type PasskeyStep = 'assertion' | 'verifying' | 'confirm_code' | 'finishing';

/** GET /devices/:deviceId/connect/passkey: the request, and from `confirm_code` on the phone's code. */
export interface PasskeyView {
  step: PasskeyStep;
  expiresAt: string;
  requestOptions: Record<string, unknown>;
  code?: string;
}

export interface Token {
  /** `api`: the public API (`tok_…`); `admin`: the admin API (`adm_…`, made by the token CLI). */
  kind: 'api' | 'admin';
  id: string;
  name: string;
  deviceId?: string;
  /** The pool the token sends through (never with deviceId). */
  poolId?: string;
  createdAt: string;
  expiresAt?: string;
  expired: boolean;
  /** When it last authenticated, to within a minute; absent when never. */
  lastUsedAt?: string;
}

/** A pool device's standing (`GET /pools`): its status, and its health score when linked. */
export interface PoolDeviceState {
  deviceId: string;
  status: ConnectionStatus;
  linked: boolean;
  healthScore?: number;
  /** `taking` its share of the pool's batches, or why it dropped out (its waiting messages move). */
  spread: 'taking' | 'not_linked' | 'restricted' | 'daily_cap' | 'low_health' | 'no_nct_salt';
}

/** A pool: a named set of devices one batch is spread over (docs/pools.md). */
export interface Pool {
  id: string;
  name: string;
  devices: string[];
  createdAt: string;
  updatedAt: string;
  deviceStates: PoolDeviceState[];
}

export type MessageStatus =
  | 'scheduled'
  | 'queued'
  | 'sent'
  | 'delivered'
  | 'read'
  | 'failed'
  | 'deleted'
  /** A message a contact wrote. */
  | 'received';

export interface Message {
  messageId: string;
  /** Outbound: the recipient as the request named it (absent on an inbound message). */
  to?: string;
  /** Inbound: the contact's number, when known. */
  from?: string;
  status: MessageStatus;
  kind: 'send' | 'otp';
  batchId?: string;
  createdAt: string;
  sentAt?: string;
  deliveredAt?: string;
  readAt?: string;
  failedAt?: string;
  error?: string;
  /** Inbound: when the message arrived (its createdAt too). */
  receivedAt?: string;
  /** What the message is, when its record says (see pages/message-content.tsx). */
  direction?: 'outbound' | 'inbound';
  /** The text (an outbound one as its recipient got it; at most 1,000 characters, see textTruncated). */
  text?: string;
  /** The text or caption was longer than the admin API carries (1,000 characters). */
  textTruncated?: boolean;
  attachment?: { type: string; mimeType?: string; fileName?: string; size?: number; caption?: string };
  edits?: { text: string; at: string }[];
  deletedAt?: string;
  reaction?: { messageId: string; emoji: string };
  /** The contacts' current reactions on this message (a removed one is gone). */
  reactions?: { contact: { phone?: string; lid?: string }; emoji: string; at: string }[];
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: { name: string; phones: string[]; email?: string; organization?: string }[];
  poll?: {
    question: string;
    options: string[];
    multiple?: boolean;
    tally?: Record<string, number> | { option: string; votes: number }[];
  };
  /** The recipient's phone and LID as the device knows them (a group has none). */
  contact?: { phone?: string; lid?: string };
  /** A message to a group: the group (its subject when known). */
  chat?: { type: 'group'; id: string; subject?: string };
  /** Phones or LIDs the text or caption mentioned. */
  mentions?: string[];
  /** An edit or a delete for everyone of ours: the message it changes, and an edit's new text. */
  revises?: { messageId: string; action: 'edit' | 'delete'; text?: string };
}

export interface Batch {
  batchId: string;
  counts: Record<MessageStatus, number>;
  total: number;
}

/** A batch's state (`GET /devices/:deviceId/batches`): what its control buttons can do. */
export type BatchState = 'active' | 'paused' | 'cancelled' | 'completed';

/** Why a queued message waits (`held.reason` of a record). */
export type HeldReason =
  | 'daily_cap'
  | 'warmup_cap'
  | 'first_contact_cap'
  | 'quiet_hours'
  | 'device_paused'
  | 'batch_paused'
  | 'scheduled';

/** A batch as the Batches page lists it: its counts by status (plus `held`, and `scheduled` once sent batches have it). */
export interface DeviceBatch {
  batchId: string;
  total: number;
  state: BatchState;
  counts: Record<MessageStatus, number> & { held: number; scheduled?: number };
  createdAt: string;
  completedAt?: string;
  pausedAt?: string;
  cancelledAt?: string;
  /** Why some of its held messages wait (read on a few of them), earliest `until` first. */
  heldReasons?: { reason: HeldReason; until: string }[];
  /** A status update (POST /statuses) or a channel post (POST /channels/:id/posts): a batch of one, not a list of recipients. */
  broadcast?: 'status' | 'channel';
}

/** GET /devices/:deviceId/batches `data`: newest first, and the cursor of the next page. */
export interface DeviceBatchPage {
  batches: DeviceBatch[];
  nextCursor?: string;
}

/** The statuses the Batches page's chart counts per hour (`GET /devices/:deviceId/activity`). */
export type ActivityStatus = 'sent' | 'delivered' | 'read' | 'failed';

/** One UTC hour of a device's sending: `hour` is its start (ISO), the counts what happened in it. */
export type ActivityHour = { hour: string } & Record<ActivityStatus, number>;

/** GET /devices/:deviceId/activity: the last hours, oldest first, zero-filled, and their totals. */
export interface ActivityAnswer {
  deviceId: string;
  hours: ActivityHour[];
  totals: Record<ActivityStatus, number>;
}

/** Who is signed in: the operator (every workspace), or a workspace's admin or agent. */
export type Role = 'operator' | 'admin' | 'agent';

export interface Session {
  via: 'session' | 'token';
  csrfToken?: string;
  createdAt?: string;
  expiresAt?: string;
  /** Absent on a gateway from before workspace consoles: the operator. */
  role?: Role;
  /** A session scoped to one workspace (a user's, or the operator viewing one). */
  workspace?: { id: string; name: string };
  /** A workspace user's session: its user name. */
  user?: string;
  /** The operator, looking at a workspace as its admin sees it. */
  viewing?: boolean;
}

/** The quotas of a workspace: absent, no limit (docs/workspaces.md). */
export type QuotaName = 'devices' | 'messagesPerDay' | 'queuedMessages' | 'mediaBytes';
export type Quotas = Partial<Record<QuotaName, number>>;

/** A workspace as the admin API shows it, with how many devices it owns. */
export interface Workspace {
  id: string;
  name: string;
  status: 'active' | 'suspended';
  quotas: Quotas;
  devices: number;
  createdAt: string;
  updatedAt: string;
}

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
] as const;
export type UsageCount = (typeof USAGE_COUNTS)[number];
export type UsageDay = { day: string } & Record<UsageCount, number> & {
    failedByReason: Record<string, number>;
  };

/** GET /workspaces/:id/usage `usage`: the days of the range, oldest first, and their sums. */
export interface Usage {
  workspaceId: string;
  from: string;
  to: string;
  days: UsageDay[];
  total: Omit<UsageDay, 'day'>;
}

/** A person who signs in to a workspace's console. */
export interface WorkspaceUser {
  user: string;
  role: 'admin' | 'agent';
  createdAt: string;
  updatedAt?: string;
}
