import { isExpired, parseDuration, type PoolStore, type TokenRecord, type TokenStore } from '@mgw/store';

/** What the admin API shows of a token: never its value or hash. */
export function tokenView(t: TokenRecord, now = new Date()) {
  return {
    id: t.id,
    name: t.name,
    ...(t.deviceId ? { deviceId: t.deviceId } : {}),
    ...(t.poolId ? { poolId: t.poolId } : {}),
    createdAt: t.createdAt,
    ...(t.expiresAt ? { expiresAt: t.expiresAt } : {}),
    expired: isExpired(t, now),
  };
}

/** Every token, as the admin API shows them. */
export async function listTokens(tokens: TokenStore): Promise<ReturnType<typeof tokenView>[]> {
  const list = await tokens.list();
  const now = new Date();
  return list.map((t) => tokenView(t, now));
}

/**
 * A new token: its value (shown once, here: Redis keeps its SHA-256) and its view. An empty
 * `deviceId`, `poolId` or `expiresIn` is none; `expiresIn` is `<n>s|m|h|d`, checked by the
 * request's schema. A `poolId` must name a pool (`pool_not_found` otherwise): a token for a pool
 * that does not exist could never send.
 */
export async function createToken(
  tokens: TokenStore,
  pools: PoolStore,
  request: { name: string; deviceId?: string; poolId?: string; expiresIn?: string },
): Promise<{ value: string; token: TokenRecord } | 'pool_not_found'> {
  if (request.poolId && !(await pools.get(request.poolId))) return 'pool_not_found';
  return tokens.create({
    name: request.name,
    ...(request.deviceId ? { deviceId: request.deviceId } : {}),
    ...(request.poolId ? { poolId: request.poolId } : {}),
    ...(request.expiresIn ? { expiresInMs: parseDuration(request.expiresIn) } : {}),
  });
}

/** Revokes a token through TokenStore.revoke (the one path that also ends cached validity). */
export async function revokeToken(tokens: TokenStore, id: string): Promise<'revoked' | 'not_found'> {
  // Longer than any token id: no such token.
  if (id.length > 64) return 'not_found';
  return (await tokens.revoke(id)) ? 'revoked' : 'not_found';
}
