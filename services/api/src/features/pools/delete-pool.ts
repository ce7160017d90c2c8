import type { PoolStore, TokenStore } from '@mgw/store';

/** The API tokens that send through the pool: while there are any, it cannot be deleted. */
export async function tokensOfPool(
  tokens: TokenStore,
  poolId: string,
): Promise<{ id: string; name: string }[]> {
  return (await tokens.list()).filter((t) => t.poolId === poolId).map((t) => ({ id: t.id, name: t.name }));
}

/**
 * Deletes a pool unless API tokens send through it (`in_use`, with them): a token left on a deleted
 * pool would answer errors to every send, so the operator revokes (or re-creates) them first.
 * The check and the delete are two steps: a token linked in between (an admin doing both at once)
 * is left on a deleted pool, and sending through it answers that the pool is not found.
 */
export async function deletePool(
  d: { pools: PoolStore; tokens: TokenStore },
  poolId: string,
): Promise<
  { kind: 'deleted' } | { kind: 'not_found' } | { kind: 'in_use'; tokens: { id: string; name: string }[] }
> {
  if (!(await d.pools.get(poolId))) return { kind: 'not_found' };
  const linked = await tokensOfPool(d.tokens, poolId);
  if (linked.length > 0) return { kind: 'in_use', tokens: linked };
  return (await d.pools.delete(poolId)) ? { kind: 'deleted' } : { kind: 'not_found' };
}
