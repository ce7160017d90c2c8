/**
 * Issue 67: the passkey browser extension (integrations/passkey-extension) as shipped, read without
 * a browser — the permissions it asks for, that it loads no code from anywhere and reads nothing
 * of WhatsApp Web's page, and the checks of the gateway address it will send the token to. Its
 * behaviour in Chromium is services/api/src/features/connection/e2e/passkey-link.test.ts.
 */
import { expect } from 'chai';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIR = fileURLToPath(new URL('../../../integrations/passkey-extension', import.meta.url));
const read = (file: string) => readFileSync(path.join(DIR, file), 'utf8');

interface Manifest {
  manifest_version: number;
  permissions?: string[];
  host_permissions?: string[];
  optional_host_permissions?: string[];
  optional_permissions?: string[];
  background?: { service_worker?: string; type?: string };
  content_scripts?: { matches: string[]; js: string[]; all_frames?: boolean; world?: string }[];
  options_ui?: { page: string };
  content_security_policy?: { extension_pages?: string };
  web_accessible_resources?: unknown;
  externally_connectable?: unknown;
}

type GatewayModule = {
  parseGatewayUrl: (text: string) => { base: string; origin: string; pattern: string };
  checkToken: (text: string) => string;
};

describe('integrations: the passkey browser extension as shipped (manifest, code, the gateway address)', () => {
  const manifest = JSON.parse(read('manifest.json')) as Manifest;

  it('When its manifest is read, then it is Manifest V3 with storage only, the gateway as an optional host, and a content script on WhatsApp Web’s top frame alone', () => {
    expect(manifest.manifest_version).to.equal(3);
    expect(manifest.permissions).to.deep.equal(['storage']);
    expect(manifest.host_permissions).to.equal(undefined);
    expect(manifest.optional_permissions).to.equal(undefined);
    expect(manifest.optional_host_permissions).to.deep.equal(['https://*/*', 'http://*/*']);
    expect(manifest.content_scripts).to.deep.equal([
      {
        matches: ['https://web.whatsapp.com/*'],
        js: ['content.js'],
        run_at: 'document_idle',
        all_frames: false,
      },
    ]);
    expect(manifest.background).to.deep.equal({ service_worker: 'service-worker.js', type: 'module' });
    expect(manifest.web_accessible_resources, 'no page may load its files').to.equal(undefined);
    expect(manifest.externally_connectable, 'no page may message it').to.equal(undefined);
    const csp = manifest.content_security_policy?.extension_pages ?? '';
    expect(csp).to.match(/(^|; )script-src 'self'(;|$)/);
    expect(csp).to.match(/(^|; )object-src 'none'(;|$)/);
    for (const file of ['service-worker.js', 'content.js', manifest.options_ui!.page])
      expect(existsSync(path.join(DIR, file)), file).to.equal(true);
  });

  it('When its code is read, then it loads nothing from elsewhere, parses no HTML, and the content script reads nothing of the page', () => {
    const files = readdirSync(DIR).filter((f) => /\.(js|html)$/.test(f));
    expect(files).to.include.members([
      'content.js',
      'service-worker.js',
      'options.js',
      'gateway.js',
      'options.html',
    ]);
    for (const file of files) {
      const text = read(file);
      for (const banned of [
        /\beval\(/,
        /new Function\(/,
        /\binnerHTML\b/,
        /\bouterHTML\b/,
        /insertAdjacentHTML/,
        /document\.write/,
        /importScripts/,
        /\bimport\(/,
        /<script[^>]+src="(?!options\.js")/,
        /\bfrom '(?!\.\/)/,
      ])
        expect(banned.test(text), `${file}: ${banned}`).to.equal(false);
    }
    const content = read('content.js');
    for (const reading of [
      /document\.(body|head|title|cookie|forms|images|links|querySelector|getElement)/,
      /MutationObserver/,
      /localStorage|sessionStorage|indexedDB/,
      /postMessage|addEventListener\('message'/,
      /\bfetch\(/,
      /XMLHttpRequest|WebSocket/,
    ])
      expect(reading.test(content), `content.js: ${reading}`).to.equal(false);
    expect(content).to.include("attachShadow({ mode: 'closed' })");
    expect(content).to.include('ev.isTrusted');
  });

  it('When a gateway address is typed, then only http(s) without credentials, query or fragment is kept, plain http only on this machine', async () => {
    const { parseGatewayUrl, checkToken } = (await import(
      pathToFileURL(path.join(DIR, 'gateway.js')).href
    )) as GatewayModule;
    expect(parseGatewayUrl(' https://gateway.example.com/ ')).to.deep.equal({
      base: 'https://gateway.example.com',
      origin: 'https://gateway.example.com',
      pattern: 'https://gateway.example.com/*',
    });
    expect(parseGatewayUrl('https://example.com:8443/mgw/')).to.deep.equal({
      base: 'https://example.com:8443/mgw',
      origin: 'https://example.com:8443',
      pattern: 'https://example.com:8443/*',
    });
    for (const local of ['http://127.0.0.1:3000', 'http://localhost:3000', 'http://[::1]:3000'])
      expect(parseGatewayUrl(local).base).to.equal(local);
    const refusals: [string, RegExp][] = [
      ['gateway.example.com', /Enter the gateway’s address/],
      ['ftp://gateway.example.com', /https:\/\//],
      ['http://gateway.example.com', /Use https:\/\/ for a gateway on another machine/],
      ['http://127.0.0.2:3000', /Use https:\/\//],
      ['https://user:secret@gateway.example.com', /user name and password/],
      ['https://gateway.example.com/?token=x', /query/],
      ['https://gateway.example.com/#x', /fragment/],
      ['https://gateway.example.com/api/messenger/v1', /without \/api\/messenger\/v1/],
    ];
    for (const [typed, why] of refusals) expect(() => parseGatewayUrl(typed), typed).to.throw(why);
    expect(checkToken(' mgw_0123456789abcdef0123 ')).to.equal('mgw_0123456789abcdef0123');
    expect(() => checkToken('mgw_ with space')).to.throw(/API token/);
    expect(() => checkToken('')).to.throw(/API token/);
  });
});
