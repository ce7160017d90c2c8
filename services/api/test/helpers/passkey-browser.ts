/**
 * Debian's Chromium with the passkey extension (integrations/passkey-extension) loaded, for the
 * end-to-end tests of a passkey-gated link: `web.whatsapp.com` mapped to a blank HTTPS page of the
 * test's own (a certificate for web.whatsapp.com from a CA the test makes, trusted by its SPKI), a
 * DevTools virtual authenticator holding the account's passkey, and the extension's panel read and
 * pressed through the DevTools DOM (its shadow root is closed: the page, and so Playwright's
 * locators, cannot reach it; a click at its button's place is a real, trusted click).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type CDPSession, type Page, type Worker } from 'playwright-core';
import { createTlsMaterial } from '@mgw/messenger-sim';
import { noteStarted, waitFor, type SoftwareAuthenticator } from '@mgw/testing';
import { CHROMIUM } from '@mgw/testing/browser';

export const EXTENSION_DIR = fileURLToPath(
  new URL('../../../../integrations/passkey-extension', import.meta.url),
);
export const WHATSAPP_WEB = 'https://web.whatsapp.com';

/** The blank page served as https://web.whatsapp.com, and the paths the browser asked of it. */
export interface WebWhatsApp {
  port: number;
  /** base64 SHA-256 of the leaf's SubjectPublicKeyInfo (`--ignore-certificate-errors-spki-list`). */
  spki: string;
  requests: string[];
  close(): Promise<void>;
}

/** A blank page for https://web.whatsapp.com on 127.0.0.1: WebAuthn's origin, nothing of WhatsApp's. */
export async function startWebWhatsApp(): Promise<WebWhatsApp> {
  const tls = createTlsMaterial(['web.whatsapp.com'], 'passkey e2e test CA');
  const leaf = new X509Certificate(tls.certPem);
  const spki = createHash('sha256')
    .update(leaf.publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64');
  const requests: string[] = [];
  const server: Server = createServer({ cert: tls.certPem + tls.caPem, key: tls.keyPem }, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end('<!doctype html><html lang="en"><title>WhatsApp Web (test page)</title><main></main></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    spki,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Chromium with the extension, one page on which the virtual authenticator lives. */
export interface ExtensionBrowser {
  context: BrowserContext;
  worker: Worker;
  extensionId: string;
  page: Page;
  cdp: CDPSession;
  close(): Promise<void>;
}

/**
 * Chromium (Debian's, `--headless=new`) with the extension loaded unpacked, `web.whatsapp.com`
 * mapped to `web` and every other name unresolvable. Throws — never skips — when Chromium is not
 * there or does not start, or when the extension does not load.
 *
 * `gatewayOrigin`: the one deviation from the extension as shipped. It asks for the permission to
 * reach the gateway when its settings are saved (`chrome.permissions.request`), and the browser
 * then asks the operator in a dialog no automation can answer; so the copy loaded here lists that
 * origin in `host_permissions`, which makes the request answer yes at once. Nothing else of the
 * extension changes.
 */
/** Fails at once, with what to install, when Debian's Chromium is not there (never a skip). */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
}

export async function launchWithExtension(
  web: WebWhatsApp,
  gatewayOrigin: string,
): Promise<ExtensionBrowser> {
  requireChromium();
  const extension = await mkdtemp(path.join(os.tmpdir(), 'mgw-passkey-extension-'));
  const profile = await mkdtemp(path.join(os.tmpdir(), 'mgw-passkey-profile-'));
  await cp(EXTENSION_DIR, extension, { recursive: true, filter: (src) => !src.endsWith('.md') });
  const manifestPath = path.join(extension, 'manifest.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as Record<string, unknown>;
  await writeFile(manifestPath, JSON.stringify({ ...manifest, host_permissions: [`${gatewayOrigin}/*`] }));
  const cleanup = async () => {
    await rm(extension, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  };
  let context: BrowserContext;
  try {
    noteStarted('browser');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      // `--headless=new` below: Playwright's own flag would add the old `--headless`.
      headless: false,
      ignoreDefaultArgs: ['--disable-extensions'],
      viewport: { width: 1280, height: 800 },
      timeout: 60_000,
      args: [
        '--headless=new',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        `--disable-extensions-except=${extension}`,
        `--load-extension=${extension}`,
        `--host-resolver-rules=MAP web.whatsapp.com 127.0.0.1:${web.port},MAP * ~NOTFOUND,EXCLUDE 127.0.0.1`,
        `--ignore-certificate-errors-spki-list=${web.spki}`,
      ],
    });
  } catch (err) {
    await cleanup();
    throw new Error(`Chromium (${CHROMIUM}) did not start with the extension: ${(err as Error).message}`);
  }
  try {
    const worker =
      context.serviceWorkers().find((w) => w.url().endsWith('/service-worker.js')) ??
      (await context.waitForEvent('serviceworker', { timeout: 60_000 }));
    const extensionId = new URL(worker.url()).host;
    const page = context.pages()[0] ?? (await context.newPage());
    const cdp = await context.newCDPSession(page);
    return {
      context,
      worker,
      extensionId,
      page,
      cdp,
      close: async () => {
        await context.close();
        await cleanup();
      },
    };
  } catch (err) {
    await context.close();
    await cleanup();
    throw new Error(`the extension did not load in Chromium (no service worker): ${(err as Error).message}`);
  }
}

/**
 * The extension's settings page: the gateway's address and the device token saved (the permission
 * granted), and what the page said of the gateway after saving.
 */
export async function configureExtension(
  b: ExtensionBrowser,
  gatewayUrl: string,
  token: string,
  /** Where to save a screenshot of the page once saved. */
  screenshot?: string,
): Promise<string> {
  const settings = await b.context.newPage();
  try {
    await settings.goto(`chrome-extension://${b.extensionId}/options.html`);
    await settings.getByLabel('Gateway address').fill(gatewayUrl);
    await settings.getByLabel('Device token').fill(token);
    await settings.getByRole('button', { name: 'Save' }).click();
    const result = settings.locator('#result');
    await waitFor(
      async () => /gateway answers|refused|cannot|not saved/i.test((await result.textContent()) ?? ''),
      {
        timeoutMs: 60_000,
        what: 'the settings page to check the gateway',
      },
    );
    if (screenshot) await settings.screenshot({ path: screenshot, fullPage: true });
    return (await result.textContent()) ?? '';
  } finally {
    await settings.close();
  }
}

/**
 * A DevTools virtual authenticator on the page (a platform authenticator that verifies its user)
 * holding `passkey`'s credential for whatsapp.com.
 */
export async function addVirtualPasskey(cdp: CDPSession, passkey: SoftwareAuthenticator): Promise<string> {
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  await cdp.send('WebAuthn.addCredential', {
    authenticatorId,
    credential: {
      credentialId: passkey.credentialId.toString('base64'),
      isResidentCredential: true,
      rpId: 'whatsapp.com',
      privateKey: passkey.pkcs8,
      userHandle: Buffer.from('gateway-e2e').toString('base64'),
      signCount: 0,
    },
  });
  return authenticatorId;
}

/**
 * Evaluates `expression` (awaiting a promise it gives) in the extension's content-script world on
 * the page: what the content script itself could do there.
 */
export async function evaluateInContentScript(b: ExtensionBrowser, expression: string): Promise<unknown> {
  type Context = { id: number; origin: string; auxData?: { type?: string } };
  let world: Context | undefined;
  // The content script's world exists once it ran (document_idle, just after the page loaded).
  await waitFor(
    async () => {
      const contexts: Context[] = [];
      const seen = (e: { context: Context }) => contexts.push(e.context);
      b.cdp.on('Runtime.executionContextCreated', seen);
      try {
        // Enabling replays every live context as an event.
        await b.cdp.send('Runtime.enable');
        await b.cdp.send('Runtime.disable');
      } finally {
        b.cdp.off('Runtime.executionContextCreated', seen);
      }
      world = contexts.find(
        (c) => c.auxData?.type === 'isolated' && c.origin === `chrome-extension://${b.extensionId}`,
      );
      return world !== undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: 'the extension’s content script on the page' },
  );
  const { result, exceptionDetails } = (await b.cdp.send('Runtime.evaluate', {
    expression,
    contextId: world!.id,
    awaitPromise: true,
    returnByValue: true,
  })) as { result: { value?: unknown }; exceptionDetails?: { text: string } };
  if (exceptionDetails) throw new Error(`in the content script's world: ${exceptionDetails.text}`);
  return result.value;
}

interface DomNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string;
  backendNodeId: number;
  children?: DomNode[];
  shadowRoots?: DomNode[];
}

/** An element's words, its shadow root's included (each node's text apart: spacing is not kept). */
const textOf = (n: DomNode): string =>
  n.nodeType === 3 ? n.nodeValue : [...(n.shadowRoots ?? []), ...(n.children ?? [])].map(textOf).join(' ');

/** The extension's panel on WhatsApp Web, as the operator sees it: its words and its buttons. */
export class ExtensionPanel {
  constructor(
    private readonly page: Page,
    private readonly cdp: CDPSession,
  ) {}

  /** The panel's element (its shadow root pierced), or undefined when none is shown. */
  private async host(): Promise<DomNode | undefined> {
    const { root } = (await this.cdp.send('DOM.getDocument', { depth: -1, pierce: true })) as {
      root: DomNode;
    };
    const find = (n: DomNode): DomNode | undefined => {
      if (n.nodeName === 'MGW-PASSKEY-LINK') return n;
      for (const c of [...(n.children ?? []), ...(n.shadowRoots ?? [])]) {
        const hit = find(c);
        if (hit) return hit;
      }
      return undefined;
    };
    return find(root);
  }

  /** The panel's text ('' when none is shown). */
  async text(): Promise<string> {
    const host = await this.host();
    return host ? textOf(host).replace(/\s+/g, ' ').trim() : '';
  }

  /** Waits until the panel's text matches `re`; answers it. */
  async waitForText(re: RegExp, timeoutMs = 60_000): Promise<string> {
    let last = '';
    try {
      await waitFor(async () => re.test((last = await this.text())), {
        timeoutMs,
        intervalMs: 200,
        what: `${re}`,
      });
    } catch (err) {
      throw new Error(`${(err as Error).message}; the panel says: "${last}"`);
    }
    return last;
  }

  /** Clicks the panel's button whose words start with `label` (with the mouse, at its place). */
  async click(label: string): Promise<void> {
    const host = await this.host();
    const find = (n: DomNode): DomNode | undefined => {
      if (n.nodeName === 'BUTTON' && textOf(n).trim().startsWith(label)) return n;
      for (const c of [...(n.children ?? []), ...(n.shadowRoots ?? [])]) {
        const hit = find(c);
        if (hit) return hit;
      }
      return undefined;
    };
    const button = host && find(host);
    if (!button) throw new Error(`no "${label}" button on the panel; it says: "${host ? textOf(host) : ''}"`);
    const { model } = (await this.cdp.send('DOM.getBoxModel', { backendNodeId: button.backendNodeId })) as {
      model: { content: number[] };
    };
    const q = model.content;
    await this.page.mouse.click((q[0]! + q[4]!) / 2, (q[1]! + q[5]!) / 2);
  }
}
