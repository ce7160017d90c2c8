import { ERRORS } from '@mgw/contracts';
import { ADMIN_ERRORS } from '../admin-errors.js';
import { ADMIN_BASE, API_BASE, type AdminRoute, type ApiRoute, type RouteSpec } from '../route-table.js';
import { FEATURES } from '../../features/mounts.js';

/**
 * The attacker matrix's tables (attacker-matrix.test.ts): what the documentation says each route
 * is, each guard's refusals, the routes of both APIs from the route table, and the variants of a
 * path an attacker tries. Written from docs/workspaces.md and docs/pools.md, not from the code's
 * own tables, so that a hole the code shares with its own picture is still found.
 */

/** What the docs say a workspace route is (docs/workspaces.md "A workspace token's own routes"). */
export const WORKSPACE_PATHS = new Set([
  'get /workspace',
  'get /workspace/usage',
  'get /devices',
  'post /devices',
  'get /devices/:deviceId',
  'get /tokens',
  'post /tokens',
  'delete /tokens/:tokenId',
]);
/** What a pool token may call (docs/pools.md "Pool tokens"). */
export const POOL_PATHS = new Set([
  'post /send',
  'get /messages/:id',
  'get /batches',
  'get /batches/:batchId',
  'post /batches/:batchId/pause',
  'post /batches/:batchId/resume',
  'post /batches/:batchId/cancel',
  'post /mcp',
]);
export const rowKey = (r: RouteSpec) => `${r.method} ${r.path}`;
export const isWorkspaceRow = (r: ApiRoute) => WORKSPACE_PATHS.has(rowKey(r));

/** Each error a guard answers with: an allowed probe must never get one of these. */
export const GUARD_ERRORS = new Set<string>([
  ERRORS.invalidToken,
  ERRORS.workspaceSuspended,
  ERRORS.workspaceTokenRequired,
  ERRORS.poolTokenNotAllowed,
  ERRORS.deviceNotNamed,
  ERRORS.notFound,
  ADMIN_ERRORS.unauthenticated,
  ADMIN_ERRORS.roleCannot,
  ADMIN_ERRORS.csrf,
]);

const allRoutes = FEATURES.flatMap((f) => f.routes as readonly RouteSpec[]);
export const apiRoutes = allRoutes.filter(
  (r): r is ApiRoute => r.surface !== 'admin' && !(r as ApiRoute).root && r.auth !== 'none',
);
export const adminRoutes = allRoutes.filter(
  (r): r is AdminRoute => r.surface === 'admin' && r.auth !== 'none',
);

/** Each route's path as the router reads it: its letters exactly, a parameter any one segment. */
const templates = (admin: boolean) =>
  allRoutes
    .filter((r) => (r.surface === 'admin') === admin && !(r as ApiRoute).root)
    .map((r) => new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`));
const TEMPLATES = { api: templates(false), admin: templates(true) };

/**
 * Whether a variant happens to spell another route (`/media/Settings` is `/media/{id}` with the id
 * `Settings`): such a request is that route's, answered by it, and not a path that does not exist.
 */
export function spellsARoute(path: string, admin: boolean): boolean {
  const base = admin ? ADMIN_BASE : API_BASE;
  if (!path.startsWith(`${base}/`)) return false;
  const rest = path.slice(base.length);
  const unprefixed = admin ? rest : rest.replace(/^\/devices\/[^/]+(?=\/)/, '');
  return TEMPLATES[admin ? 'admin' : 'api'].some((t) => t.test(rest) || t.test(unprefixed));
}

/** A path's variants an attacker tries; each names a path that does not exist. */
export function variantsOf(path: string, literal: (index: number) => boolean): [string, string][] {
  const segs = path.slice(1).split('/');
  const out: [string, string][] = [];
  const join = (s: string[]) => `/${s.join('/')}`;
  segs.forEach((seg, i) => {
    if (!literal(i) || !/[a-z]/.test(seg)) return;
    const at = seg.search(/[a-z]/);
    const with_ = (v: string) => join(segs.map((s, j) => (j === i ? v : s)));
    out.push([`case of "${seg}"`, with_(seg.slice(0, at) + seg[at]!.toUpperCase() + seg.slice(at + 1))]);
    const hex = seg.charCodeAt(at).toString(16).toUpperCase();
    out.push([
      `"${seg}" with a letter percent-encoded`,
      with_(`${seg.slice(0, at)}%${hex}${seg.slice(at + 1)}`),
    ]);
    out.push([`"${seg}" with a matrix parameter`, with_(`${seg};v=1`)]);
  });
  const last = segs.length - 1;
  const before = (extra: string) => join([...segs.slice(0, last), extra, segs[last]!]);
  out.push(['trailing slash', `${path}/`]);
  out.push(['doubled slash', join([...segs.slice(0, last), '', segs[last]!])]);
  out.push(['leading doubled slash', `/${path}`]);
  out.push(['encoded slash', `${join(segs.slice(0, last))}%2F${segs[last]}`]);
  out.push(['encoded backslash', `${join(segs.slice(0, last))}%5C${segs[last]}`]);
  out.push(['backslash', `${join(segs.slice(0, last))}\\${segs[last]}`]);
  out.push(['dot segment', before('.')]);
  out.push(['dot-dot segment', join([...segs.slice(0, last), 'x', '..', segs[last]!])]);
  out.push(['encoded dot-dot segment', join([...segs.slice(0, last), 'x', '%2e%2e', segs[last]!])]);
  out.push(['overlong UTF-8 slash', `${join(segs.slice(0, last))}%C0%AF${segs[last]}`]);
  out.push(['overlong segment', before('a'.repeat(4000))]);
  // Unicode look-alikes of a letter of the last literal segment: a Kelvin sign for k, a dotless ı,
  // a Cyrillic ѕ/е/о, fullwidth letters — each percent-encoded UTF-8, as a client sends them.
  const lookAlikes: Record<string, string> = {
    k: '\u212a',
    i: '\u0131',
    s: '\u0455',
    e: '\u0435',
    o: '\u043e',
  };
  const lastLiteral = [...segs.keys()].reverse().find((i) => literal(i) && /[a-z]/.test(segs[i]!));
  if (lastLiteral !== undefined) {
    const seg = segs[lastLiteral]!;
    const at = [...seg].findIndex((c) => c in lookAlikes);
    const swapAt = at >= 0 ? at : seg.search(/[a-z]/);
    const swap = at >= 0 ? lookAlikes[seg[at]!]! : String.fromCodePoint(0xff41 + seg.charCodeAt(swapAt) - 97);
    const v = `${seg.slice(0, swapAt)}${encodeURIComponent(swap)}${seg.slice(swapAt + 1)}`;
    out.push([`Unicode look-alike in "${seg}"`, join(segs.map((s, j) => (j === lastLiteral ? v : s)))]);
    out.push([
      `zero-width space in "${seg}"`,
      join(segs.map((s, j) => (j === lastLiteral ? `${seg}%E2%80%8B` : s))),
    ]);
  }
  return out;
}
