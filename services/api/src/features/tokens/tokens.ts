import { DEFAULT_WORKSPACE } from '@mgw/contracts';
import { isExpired, parseDuration, type PoolStore, type TokenRecord, type TokenStore } from '@mgw/store';

/** API tokens (`tok_…`, the public API) and admin tokens (`adm_…`, the admin API; made by the CLI). */
export type TokenKind = 'api' | 'admin';

/**
 * The kind a token id names. The two spaces' ids cannot collide: API token ids are `tok_` + 12
 * hex, admin token ids `adm_` + 12 hex (libs/contracts ids.ts), so an id routes by its prefix.
 */
export const kindOfId = (id: string): TokenKind => (id.startsWith('adm_') ? 'admin' : 'api');

/** The two token stores the admin API lists and revokes from. */
export interface TokenStores {
  api: TokenStore;
  admin: TokenStore;
}

/** What the admin API shows of a token: never its value or hash. */
export function tokenView(t: TokenRecord, now = new Date(), kind: TokenKind = 'api') {
  return {
    kind,
    id: t.id,
    name: t.name,
    ...(t.deviceId ? { deviceId: t.deviceId } : {}),
    ...(t.poolId ? { poolId: t.poolId } : {}),
    ...(t.workspaceId ? { workspaceId: t.workspaceId } : {}),
    createdAt: t.createdAt,
    ...(t.expiresAt ? { expiresAt: t.expiresAt } : {}),
    expired: isExpired(t, now),
    ...(t.lastUsedAt ? { lastUsedAt: t.lastUsedAt } : {}),
  };
}

export type TokenView = ReturnType<typeof tokenView>;

/**
 * Every token of both kinds, as the admin API shows them: the most recently used first, then the
 * never used ones, newest first.
 */
export async function listTokens(stores: TokenStores): Promise<TokenView[]> {
  const [api, admin] = await Promise.all([stores.api.list(), stores.admin.list()]);
  const now = new Date();
  return [...api.map((t) => tokenView(t, now, 'api')), ...admin.map((t) => tokenView(t, now, 'admin'))].sort(
    (a, b) =>
      (b.lastUsedAt ?? '').localeCompare(a.lastUsedAt ?? '') ||
      b.createdAt.localeCompare(a.createdAt) ||
      a.id.localeCompare(b.id),
  );
}

/**
 * A new token: its value (shown once, here: Redis keeps its SHA-256) and its view. An empty
 * `deviceId`, `poolId` or `expiresIn` is none; `expiresIn` is `<n>s|m|h|d`, checked by the
 * request's schema. A `poolId` must name a pool (`pool_not_found` otherwise): a token for a pool
 * that does not exist could never send. A pool or a device of a workspace other than default makes
 * a token of that workspace (it lists and revokes it, within `workspaceTokenLimit`, the install's
 * WORKSPACE_MAX_TOKENS: `limit`), since only
 * its own tokens send through its pool (docs/workspaces.md "The console").
 */
export async function createToken(
  tokens: Pick<TokenStore, 'createWithin'>,
  pools: Pick<PoolStore, 'get'>,
  request: { name: string; deviceId?: string; poolId?: string; expiresIn?: string },
  devices?: { ownerOf(deviceId: string): Promise<string> },
  workspaceTokenLimit = Number.MAX_SAFE_INTEGER,
): Promise<{ value: string; token: TokenRecord } | 'pool_not_found' | 'limit'> {
  const pool = request.poolId ? await pools.get(request.poolId) : undefined;
  if (request.poolId && !pool) return 'pool_not_found';
  // Whose the token is: its pool's or its device's workspace (default's keep the old shape).
  const owner = pool?.workspace ?? (request.deviceId ? await devices?.ownerOf(request.deviceId) : undefined);
  const workspace = owner && owner !== DEFAULT_WORKSPACE ? owner : undefined;
  return tokens.createWithin(
    {
      name: request.name,
      ...(request.deviceId ? { deviceId: request.deviceId } : {}),
      ...(request.poolId ? { poolId: request.poolId } : {}),
      ...(workspace ? { workspaceId: workspace } : {}),
      ...(request.expiresIn ? { expiresInMs: parseDuration(request.expiresIn) } : {}),
    },
    workspace ? workspaceTokenLimit : Number.MAX_SAFE_INTEGER,
  );
}

/**
 * Revokes a token of either kind, routed by its id's prefix (kindOfId), through TokenStore.revoke
 * (the one path that also ends cached validity). The admin token of the caller itself may be
 * revoked: its next call is refused.
 */
export async function revokeToken(
  stores: TokenStores,
  id: string,
): Promise<{ kind: TokenKind } | 'not_found'> {
  // Longer than any token id: no such token.
  if (id.length > 64) return 'not_found';
  const kind = kindOfId(id);
  return (await stores[kind].revoke(id)) ? { kind } : 'not_found';
}
