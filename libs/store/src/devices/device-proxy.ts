import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import type { Sealer } from '../encryption/sealer.js';

/** The proxy kinds a device can connect through: HTTP CONNECT and SOCKS5. */
export const PROXY_SCHEMES = ['http', 'socks5'] as const;
export type ProxyScheme = (typeof PROXY_SCHEMES)[number];

/** A URL longer than this is no proxy URL an operator typed. */
const MAX_PROXY_URL_LENGTH = 2048;

/** A proxy URL, checked: what the agents need, and nothing else. */
export interface ProxyUrl {
  scheme: ProxyScheme;
  host: string;
  port: number;
  /** The whole URL as given (credentials included): only ever sealed or handed to an agent. */
  href: string;
  hasCredentials: boolean;
}

/**
 * What the API shows of a proxy: where it is and whether it has credentials, never the
 * credentials (not even the user name).
 */
export interface ProxyView {
  /** `scheme://host:port`, without credentials. */
  url: string;
  scheme: ProxyScheme;
  host: string;
  port: number;
  hasCredentials: boolean;
}

/** Why a proxy URL is refused; the message never repeats the URL (it may carry a password). */
export class ProxyUrlError extends Error {
  override name = 'ProxyUrlError';
}

/**
 * Checks a proxy URL: `http://[user:pass@]host:port` (HTTP CONNECT) or
 * `socks5://[user:pass@]host:port`, with an explicit port, and no path, query or fragment (a
 * proxy has none; one given is a mistake better said than ignored). `https://` proxies (TLS to the
 * proxy) are not supported.
 */
export function parseProxyUrl(raw: string): ProxyUrl {
  if (typeof raw !== 'string' || raw.length === 0) throw new ProxyUrlError('must be a proxy URL');
  if (raw.length > MAX_PROXY_URL_LENGTH)
    throw new ProxyUrlError(`must be at most ${MAX_PROXY_URL_LENGTH} characters`);
  // `new URL` keeps a `%` that starts no escape (`%ZZ` in a password) as it is: the credentials
  // the agent would send are then not the ones meant. Said without repeating the URL.
  if (/%(?![0-9A-Fa-f]{2})/.test(raw))
    throw new ProxyUrlError('has a % that starts no escape: write %XX (two hex digits), and % itself as %25');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ProxyUrlError('must be a URL such as http://user:pass@host:3128 or socks5://host:1080');
  }
  const scheme = url.protocol.slice(0, -1);
  if (!(PROXY_SCHEMES as readonly string[]).includes(scheme))
    throw new ProxyUrlError('must use the scheme http (HTTP CONNECT) or socks5');
  if (!url.hostname) throw new ProxyUrlError('must name the proxy host');
  if (!url.port) throw new ProxyUrlError('must name the proxy port (e.g. :3128 or :1080)');
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash || raw.trimEnd().endsWith('?'))
    throw new ProxyUrlError('must have no path, query or fragment');
  if (url.password && !url.username) throw new ProxyUrlError('has a password but no user name');
  return {
    scheme: scheme as ProxyScheme,
    host: url.hostname,
    port: Number(url.port),
    href: raw,
    hasCredentials: Boolean(url.username),
  };
}

/** The proxy as the API shows it (see ProxyView). */
export function proxyView(p: ProxyUrl): ProxyView {
  return {
    url: `${p.scheme}://${p.host}:${p.port}`,
    scheme: p.scheme,
    host: p.host,
    port: p.port,
    hasCredentials: p.hasCredentials,
  };
}

/** What a device's own setting says: a proxy, or directly (past `DEVICE_PROXY_URL`). */
export type DeviceProxySetting =
  { direct: false; proxy: ProxyUrl; updatedAt: string } | { direct: true; updatedAt: string };

/** What the API shows of a device's own setting. */
export type DeviceProxySettingView =
  (ProxyView & { updatedAt: string }) | { direct: true; updatedAt: string };

interface StoredProxy {
  /** The proxy URL; absent when the device connects directly. */
  url?: string;
  direct?: true;
  updatedAt: string;
}

/**
 * The proxy of each device (`keys.deviceProxy`), set by the operator: the URL is sealed (bound to
 * its key) since it may carry the proxy's credentials, so Redis never holds them in the clear. A
 * device may also be set to connect directly: then `DEVICE_PROXY_URL`, the default of every device
 * without a setting of its own, is not used for it.
 */
export class DeviceProxyStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly sealer: Sealer,
  ) {}

  /** Checks and stores the device's proxy (replacing any); throws ProxyUrlError for a bad URL. */
  async set(deviceId: string, rawUrl: string, now = new Date()): Promise<ProxyView & { updatedAt: string }> {
    const parsed = parseProxyUrl(rawUrl);
    const stored = await this.write(deviceId, { url: parsed.href, updatedAt: now.toISOString() });
    return { ...proxyView(parsed), updatedAt: stored.updatedAt };
  }

  /** Sets the device to connect directly, whatever `DEVICE_PROXY_URL` says (replacing any proxy). */
  async setDirect(deviceId: string, now = new Date()): Promise<{ direct: true; updatedAt: string }> {
    const stored = await this.write(deviceId, { direct: true, updatedAt: now.toISOString() });
    return { direct: true, updatedAt: stored.updatedAt };
  }

  /** The device's own setting; undefined when it has none (the default applies). */
  async setting(deviceId: string): Promise<DeviceProxySetting | undefined> {
    const key = keys.deviceProxy(deviceId);
    const sealed = await this.redis.get(key);
    if (!sealed) return undefined;
    const stored = JSON.parse(this.sealer.openText(sealed, storageContext(key))) as StoredProxy;
    if (stored.direct || stored.url === undefined) return { direct: true, updatedAt: stored.updatedAt };
    return { direct: false, proxy: parseProxyUrl(stored.url), updatedAt: stored.updatedAt };
  }

  /** The device's own proxy, checked; undefined when it has none or connects directly. */
  async get(deviceId: string): Promise<(ProxyUrl & { updatedAt: string }) | undefined> {
    const s = await this.setting(deviceId);
    return s && !s.direct ? { ...s.proxy, updatedAt: s.updatedAt } : undefined;
  }

  /** What the API shows of the device's own setting; undefined when it has none. */
  async view(deviceId: string): Promise<DeviceProxySettingView | undefined> {
    const s = await this.setting(deviceId);
    if (!s) return undefined;
    return s.direct ? s : { ...proxyView(s.proxy), updatedAt: s.updatedAt };
  }

  /** Removes the device's own setting (it uses the default again); false when it had none. */
  async remove(deviceId: string): Promise<boolean> {
    return (await this.redis.del(keys.deviceProxy(deviceId))) === 1;
  }

  private async write(deviceId: string, stored: StoredProxy): Promise<StoredProxy> {
    const key = keys.deviceProxy(deviceId);
    await this.redis.set(key, this.sealer.sealText(JSON.stringify(stored), storageContext(key)));
    return stored;
  }
}
