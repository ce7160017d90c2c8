import { DEFAULT_WORKSPACE, newWorkspaceDeviceId } from '@mgw/contracts';
import type { SessionStore, TokenRecord, TokenStore, WorkspaceRecord, WorkspaceStore } from '@mgw/store';
import { parseDuration } from '@mgw/store';
import { tokenView } from '../tokens/index.js';

/** What a workspace's people and its operator see of it (docs/workspaces.md). */
export function workspaceView(w: WorkspaceRecord, devices: number) {
  return {
    id: w.id,
    name: w.name,
    status: w.status,
    quotas: w.quotas,
    devices,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}
export type WorkspaceView = ReturnType<typeof workspaceView>;

/** The stores a workspace's use cases read and write. */
export interface WorkspaceDeps {
  workspaces: Pick<
    WorkspaceStore,
    'get' | 'devices' | 'hasDevice' | 'addDevice' | 'workspaceOf' | 'ceilings' | 'tokenLimit'
  >;
  sessions: Pick<SessionStore, 'get'>;
  tokens: Pick<TokenStore, 'createWithin' | 'listWorkspace' | 'get' | 'revoke'>;
  /** Whose a pool is (undefined: no such pool); absent: no pool is any workspace's (no pool tokens). */
  pools?: { workspaceOf(poolId: string): Promise<string | undefined> };
}

/** One device of a workspace as its list shows it: the id and what its session says. */
export async function deviceSummary(sessions: WorkspaceDeps['sessions'], deviceId: string) {
  const s = await sessions.get(deviceId);
  return {
    deviceId,
    status: s.status,
    ...(s.phone ? { phone: s.phone } : {}),
    ...(s.name ? { name: s.name } : {}),
  };
}
export type DeviceSummary = Awaited<ReturnType<typeof deviceSummary>>;

/** A workspace with its device count; undefined when there is none of that id. */
export async function showWorkspace(
  deps: Pick<WorkspaceDeps, 'workspaces'>,
  id: string,
): Promise<WorkspaceView | undefined> {
  const w = await deps.workspaces.get(id);
  return w && workspaceView(w, (await deps.workspaces.devices(id)).length);
}

/** The workspace's devices, each with its status, by id. */
export async function listDevices(
  deps: Pick<WorkspaceDeps, 'workspaces' | 'sessions'>,
  workspaceId: string,
): Promise<DeviceSummary[]> {
  const ids = await deps.workspaces.devices(workspaceId);
  return Promise.all(ids.map((id) => deviceSummary(deps.sessions, id)));
}

/** One device of the workspace; undefined when the workspace does not own it (whoever does). */
export async function showDevice(
  deps: Pick<WorkspaceDeps, 'workspaces' | 'sessions'>,
  workspaceId: string,
  deviceId: string,
): Promise<DeviceSummary | undefined> {
  if ((await deps.workspaces.workspaceOf(deviceId)) !== workspaceId) return undefined;
  if (!(await deps.workspaces.hasDevice(workspaceId, deviceId))) return undefined;
  return deviceSummary(deps.sessions, deviceId);
}

/**
 * A new device for the workspace, within its device quota: its id is drawn at random (so that no
 * workspace learns another's ids by choosing one that is taken), then linked as any device is
 * (`/devices/{deviceId}/connect`).
 */
export async function createDevice(
  deps: Pick<WorkspaceDeps, 'workspaces'>,
  workspaceId: string,
): Promise<{ deviceId: string } | 'quota' | 'no_workspace'> {
  // A random 64-bit id is taken by nothing; a second draw covers the impossible.
  for (let i = 0; i < 2; i++) {
    const deviceId = newWorkspaceDeviceId();
    const added = await deps.workspaces.addDevice(workspaceId, deviceId);
    if (added === 'added') return { deviceId };
    if (added !== 'taken') return added;
  }
  throw new Error('two random device ids were both taken');
}

/** A token request of a workspace: a device of it, a pool of it, or neither (a workspace token). */
export interface WorkspaceTokenRequest {
  name: string;
  deviceId?: string;
  poolId?: string;
  expiresIn?: string;
}

/**
 * A token of the workspace: for one of its devices, for one of its pools (sending through it), or
 * (neither) a workspace token. A device or pool it does not own is `device_not_found` /
 * `pool_not_found`, whoever owns it. The value is in the answer only.
 */
export async function createWorkspaceToken(
  deps: Pick<WorkspaceDeps, 'workspaces' | 'tokens' | 'pools'>,
  workspaceId: string,
  request: WorkspaceTokenRequest,
): Promise<{ value: string; token: TokenRecord } | 'device_not_found' | 'pool_not_found' | 'limit'> {
  if (request.deviceId && request.poolId) throw new Error('a token has a deviceId or a poolId, not both');
  if (request.deviceId && (await deps.workspaces.workspaceOf(request.deviceId)) !== workspaceId) {
    return 'device_not_found';
  }
  if (request.poolId && (await deps.pools?.workspaceOf(request.poolId)) !== workspaceId)
    return 'pool_not_found';
  // Bounded (WORKSPACE_MAX_TOKENS), so that no workspace fills Redis with tokens; default's are
  // the operator's own.
  const limit = deps.workspaces.tokenLimit(workspaceId);
  return deps.tokens.createWithin(
    {
      name: request.name,
      workspaceId,
      ...(request.deviceId ? { deviceId: request.deviceId } : {}),
      ...(request.poolId ? { poolId: request.poolId } : {}),
      ...(request.expiresIn ? { expiresInMs: parseDuration(request.expiresIn) } : {}),
    },
    limit,
  );
}

/** Whether a token belongs to a workspace (a token from before workspaces is default's). */
export const tokenOf = (t: TokenRecord, workspaceId: string): boolean =>
  (t.workspaceId ?? DEFAULT_WORKSPACE) === workspaceId;

/** The workspace's tokens, as the admin API shows a token (never a value), newest first. */
export async function listWorkspaceTokens(deps: Pick<WorkspaceDeps, 'tokens'>, workspaceId: string) {
  const now = new Date();
  // The workspace's own index (default's lists its tokens from before workspaces too): never
  // every token of the install.
  const tokens = await deps.tokens.listWorkspace(workspaceId);
  return tokens.map((t) => tokenView(t, now)).reverse();
}

/** Revokes a token of the workspace; `not_found` for any other (whoever's it is). */
export async function revokeWorkspaceToken(
  deps: Pick<WorkspaceDeps, 'tokens'>,
  workspaceId: string,
  id: string,
): Promise<'revoked' | 'not_found'> {
  const token = await deps.tokens.get(id);
  if (!token || !tokenOf(token, workspaceId)) return 'not_found';
  return (await deps.tokens.revoke(id)) ? 'revoked' : 'not_found';
}
