import type { RequestHandler } from 'express';
import { CLOUD_WEBHOOK_BASE } from '@mgw/contracts';
import { ADMIN_BASE, API_BASE } from './route-table.js';

/**
 * A path's segments in their one spelling: unreserved and sub-delimiter characters, `:` and `@`,
 * and `%` (RFC 3986 `pchar`, less `;`, which would start a matrix parameter). One character class
 * (no alternation): the check every request pays is a single linear scan.
 */
const PLAIN_PATH = /^(?:\/[\w\-.~!$&'()*+,=:@%]+)+$/;
/** A `%` that does not start an escape of two hex digits. */
const BROKEN_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
/** A dot segment, as written (`/./`, `/../`) or escaped (`%2e`). */
const DOT_SEGMENT = /\/(?:\.|%2[eE]){1,2}(?=\/|$)/;
/** An escape of a character that needs none (a letter, a digit, `-._~`): RFC 3986 §6.2.2.2. */
const NEEDLESS_ESCAPE = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DEde]|5[Ff]|7[Ee])/;
/** What an escape may not stand for: a control character. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Whether a path is the one spelling the router and the guard both read (docs/security.md "One
 * reading of a path"): absolute; no empty segment (a doubled or trailing slash), no dot segment,
 * no matrix parameter (`;`), no backslash; escapes well-formed UTF-8, never of a character that
 * needs none (`%73end` is `send` in disguise) or of a control character. An escaped slash (`%2F`) is
 * data inside its segment (a channel's invite link as its id): the router matches the raw path, so
 * it never separates segments, and a path that needs it to is a path no route has. Letter case is
 * the router's: routes match it exactly.
 */
export function isCanonicalPath(path: string): boolean {
  if (!PLAIN_PATH.test(path)) return false;
  if (path.includes('/.') && DOT_SEGMENT.test(path)) return false;
  if (!path.includes('%')) return true;
  if (BROKEN_ESCAPE.test(path) || NEEDLESS_ESCAPE.test(path)) return false;
  try {
    return !CONTROL.test(decodeURIComponent(path));
  } catch {
    return false; // an escape that is not UTF-8 (an overlong `%C0%AF` among them)
  }
}

/**
 * Where a path would lead if its spelling were loosened every way a server might loosen it
 * (escapes decoded, backslashes and doubled slashes made one slash, dot segments resolved, letters
 * lowercased): used only to say which base refuses it, never to serve it.
 */
export function loosened(path: string): string {
  // An overlong UTF-8 slash or backslash, which a lax decoder reads as one.
  path = path.replace(/%C0%AF|%E0%80%AF|%C1%9C/gi, '/');
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    decoded = path.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  const segments: string[] = [];
  for (const segment of decoded.replace(/[\\;]/g, (c) => (c === ';' ? ';' : '/')).split('/')) {
    const plain = segment.split(';')[0]!;
    if (plain === '' || plain === '.') continue;
    if (plain === '..') segments.pop();
    else segments.push(plain.toLowerCase());
  }
  return `/${segments.join('/')}`;
}

/** Where the refused path of each base goes: a path under it that no route has (`~` starts none). */
const REFUSED = { api: `${API_BASE}/~`, admin: `${ADMIN_BASE}/~`, cloud: `${CLOUD_WEBHOOK_BASE}/~` };

const under = (path: string, base: string) => path === base || path.startsWith(`${base}/`);
const API_PREFIX = `${API_BASE}/`;
const ADMIN_PREFIX = `${ADMIN_BASE}/`;
const CLOUD_PREFIX = `${CLOUD_WEBHOOK_BASE}/`;

/**
 * The first reading of every request's path. A path under either API's base (or Meta's webhook
 * base, `/api/cloud/v1`: no credentials there, so its refusal is the plain 404) that is not
 * canonical (`isCanonicalPath`), or whose base is spelled otherwise (`/API/messenger/v1`,
 * `//api/…`, `/api/%6Dessenger/…`), is answered as a path that does not exist under that base:
 * the base's credentials first (401 without them), then 404 `Not found` (api-error.ts `noSuchPath`: 400 for
 * escapes that are not UTF-8) — the same for every spelling, so no spelling reaches a route the canonical one would not, and none reveals more.
 * It is rewritten to a path no route has before routing; the request's `originalUrl` (the logs)
 * keeps what was sent. Paths elsewhere (the dashboard's files, the docs page) are left as they are.
 */
export function canonicalPath(): RequestHandler {
  return (req, res, next) => {
    const query = req.url.indexOf('?');
    const path = query < 0 ? req.url : req.url.slice(0, query);
    // The common case: a path under a base, spelled as the routes are.
    if (
      (path.startsWith(API_PREFIX) || path.startsWith(ADMIN_PREFIX) || path.startsWith(CLOUD_PREFIX)) &&
      isCanonicalPath(path)
    )
      return next();
    const loose = loosened(path);
    const base = under(loose, API_BASE)
      ? 'api'
      : under(loose, ADMIN_BASE)
        ? 'admin'
        : under(loose, CLOUD_WEBHOOK_BASE)
          ? 'cloud'
          : undefined;
    if (base) {
      req.url = REFUSED[base] + (query < 0 ? '' : req.url.slice(query));
      if (!decodes(path)) res.locals.malformedPath = true;
    }
    next();
  };
}

const decodes = (path: string): boolean => {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
};
