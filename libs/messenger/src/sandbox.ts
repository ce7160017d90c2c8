import https from 'node:https';
import { WA_CERT_DETAILS } from '@whiskeysockets/baileys';
import type { Logger } from '@mgw/common';

/** What a sandbox (the WhatsApp Web simulator) publishes at `<url>/info`. */
export interface SandboxInfo {
  wsUrl: string;
  /** Hex, 32 bytes: the root key the simulator's certificate chain is signed with. */
  rootPublicKey: string;
  mediaCaPem: string;
  /**
   * The media host's origin: where every media file and history chunk is fetched in sandbox mode.
   * A sandbox without one cannot serve downloads (`sandboxMediaUrl` refuses them): sandbox mode
   * never reaches WhatsApp's CDN.
   */
  mediaUrl?: string;
}

/** Socket options that point Baileys at the sandbox instead of WhatsApp. */
export interface SandboxSocketOptions {
  waWebSocketUrl: string;
  fetchAgent: https.Agent;
  /** The CA of the simulator's media host (for downloads through the guarded outbound client). */
  mediaCaPem: string;
  /** The simulator's media host, where every media file and history chunk is fetched (`sandboxMediaUrl`). */
  mediaOrigin?: string;
}

export class SandboxMediaError extends Error {
  override name = 'SandboxMediaError';
}

/**
 * Sandbox mode only: where a media file or history chunk named `url` (its URL, or WhatsApp's CDN
 * and its `directPath`) is fetched — the sandbox's media host, same path and query, never
 * WhatsApp. A sandbox that published no media host (no `mediaUrl` in its /info) serves no
 * downloads: SandboxMediaError, saying so.
 */
export function sandboxMediaUrl(url: string, mediaOrigin: string | undefined): string {
  if (!mediaOrigin)
    throw new SandboxMediaError(
      'sandbox mode: the sandbox published no media host (no mediaUrl in its /info), and sandbox mode never fetches media from WhatsApp',
    );
  const target = new URL(url);
  return `${new URL(mediaOrigin).origin}${target.pathname}${target.search}`;
}

/** `fetchBytes` held to the sandbox's media host (`sandboxMediaUrl`): for every media download in sandbox mode. */
export function sandboxMediaFetcher<A extends unknown[]>(
  fetchBytes: (url: string, ...rest: A) => Promise<Buffer>,
  mediaOrigin: string | undefined,
): (url: string, ...rest: A) => Promise<Buffer> {
  return async (url, ...rest) => fetchBytes(sandboxMediaUrl(url, mediaOrigin), ...rest);
}

export async function fetchSandboxInfo(sandboxUrl: string, timeoutMs = 10_000): Promise<SandboxInfo> {
  const res = await fetch(new URL('info', sandboxUrl.endsWith('/') ? sandboxUrl : sandboxUrl + '/'), {
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`sandbox info at ${sandboxUrl} answered ${res.status}`);
  const info = (await res.json()) as SandboxInfo;
  if (!info.wsUrl || !/^[0-9a-f]{64}$/i.test(info.rootPublicKey ?? '') || !info.mediaCaPem) {
    throw new Error(`sandbox info at ${sandboxUrl} is incomplete`);
  }
  return info;
}

/**
 * Sandbox mode only: makes this process trust the simulator's root key (Baileys reads the mutable
 * WA_CERT_DETAILS at handshake time) and its media host's CA, and returns the socket options.
 * Never called without MESSENGER_SANDBOX_URL, so production keeps WhatsApp's trust anchor.
 */
export async function enableSandbox(sandboxUrl: string, logger: Logger): Promise<SandboxSocketOptions> {
  const info = await fetchSandboxInfo(sandboxUrl);
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(info.rootPublicKey, 'hex');
  logger.warn(
    'SANDBOX MODE: connecting to a WhatsApp Web simulator, not WhatsApp; its root key is trusted in this process',
    { sandboxUrl, wsUrl: info.wsUrl },
  );
  return {
    waWebSocketUrl: info.wsUrl,
    fetchAgent: new https.Agent({ ca: info.mediaCaPem }),
    mediaCaPem: info.mediaCaPem,
    ...(info.mediaUrl ? { mediaOrigin: info.mediaUrl } : {}),
  };
}
