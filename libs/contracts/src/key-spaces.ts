/**
 * The key spaces of keys.ts and cloud-keys.ts (not exported by the package): the prefix every key
 * lives under, and the hash tags that put one device's, pool's, workspace's or console user's keys
 * in one Redis Cluster slot.
 */
export const P = 'mgw';
export const device = (deviceId: string) => `${P}:{${deviceId}}`;
/** A pool's keys share the hash tag `{pool:<poolId>}`: one slot per pool (pool ids are slugs too). */
export const pool = (poolId: string) => `${P}:{pool:${poolId}}`;
/** A workspace's keys share the hash tag `{ws:<workspaceId>}` (workspace ids are slugs too). */
export const workspace = (workspaceId: string) => `${P}:{ws:${workspaceId}}`;
/**
 * A console user's keys share the hash tag `{cu:<user>}` (user names are lowercase `a-z`, `0-9`,
 * `.`, `_`, `@`, `-`: never `{`, `}` or a glob character).
 */
export const consoleUser = (user: string) => `${P}:{cu:${user}}`;
