import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import { audit } from './axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from './browser.js';

/**
 * Axe on what the every-page suite (every-page.test.ts) does not sweep: the sign-in page, each dialog and each
 * page in a state of its own (a link panel, a new token, a pool in edit, the chart's numbers…).
 * Each page state is audited once: the pages as the sweep shows them (Devices, Pools, Messages, a
 * chat open, Settings → API, a device's settings) are left to it.
 */
describe('Dashboard accessibility: axe (WCAG 2.1 A and AA) on every page and dialog at 1366 and 390 px (chromium, whole stack, simulator)', function () {
  this.timeout(240_000);

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552700001';
  const [ana, ben] = ['15552700011', '15552700012'];
  const poolId = `a11y-${Math.random().toString(36).slice(2, 6)}`;

  const h1 = (page: Page, name: string) => page.getByRole('heading', { name, exact: true, level: 1 });
  const open = async (path: string, heading: string, ready?: (page: Page) => Locator) => {
    const { stack, page } = dashboard();
    await page.goto(`${stack.apiUrl}${path}`);
    await h1(page, heading).waitFor();
    if (ready) await ready(page).first().waitFor({ timeout: 15_000 });
    return page;
  };

  it('When no one is signed in, then the sign-in page has no serious or critical violation', async () => {
    const { stack, page } = dashboard();
    await page.goto(`${stack.apiUrl}/dashboard`);
    await page.getByLabel('Admin password').waitFor();
    expect(await audit(page, 'sign-in')).to.deep.equal([]);
    // A wrong password: the page with its error.
    await page.getByLabel('Admin password').fill('not it');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That password is not right.').waitFor();
    expect(await audit(page, 'sign-in (wrong password)')).to.deep.equal([]);
  });

  it('When a device is linked and chatted, then the Devices page’s link panel and its disconnect dialog have none', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Axe Shop');
    const write = (from: string, text: string) =>
      stack.simApi('POST', `/contacts/${from}/send`, { to: ACCOUNT, text });
    await write(ana, 'Is the blue jacket still in stock?');
    await write(ben, 'Can I change my delivery address?');
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length ===
        2,
      { timeoutMs: 20_000, what: 'two chats' },
    );
    const sent = await stack.api<{ messageId: string }>('POST', '/send', { to: [ana, ben], text: 'Hello!' });
    expect(sent.status).to.equal(202);

    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await h1(page, 'Devices').waitFor();
    await page.getByTestId(`device-${stack.deviceId}`).getByText('Connected').waitFor();
    // The page itself, a device linked: the every-page sweep's.
    const problems: string[] = [];

    await page.getByLabel('Device ID').fill('a11y-new-device');
    await page.getByRole('button', { name: 'Link with QR code' }).click();
    await page.getByTestId('qr-code').waitFor();
    // Its row too, in the list (its "Connecting" badge).
    await page.getByTestId('device-a11y-new-device').waitFor();
    problems.push(...(await audit(page, 'devices: link panel')));
    await screenshots(page, 'a11y-devices-link-panel');
    await page.reload();

    await page
      .getByTestId(`device-${stack.deviceId}`)
      .getByRole('button', { name: /Disconnect/ })
      .click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'devices: disconnect dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });

  it("Then a device's settings page, with a webhook and an opt-out, and its remove-webhook dialog have none", async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/devices/${stack.deviceId}`, `Settings of ${stack.deviceId}`, (p) =>
      p.getByRole('region', { name: 'Profile' }).getByTestId('profile-current'),
    );
    await page.getByTestId('blocklist-empty').waitFor();
    // The page as it opens: the every-page sweep's. With a webhook (its new secret shown) and a
    // suppressed number, then the webhook's remove dialog.
    await page.getByLabel('Webhook URL').fill('http://127.0.0.1:9/hooks/whatsapp');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();
    const optOuts = page.getByTestId('opt-outs');
    await optOuts.getByLabel('Number to suppress').fill(ben);
    await optOuts.getByRole('button', { name: 'Suppress' }).click();
    await optOuts.getByText(ben).first().waitFor();
    const problems = await audit(page, 'device settings: webhook, opt-out');
    await page.getByRole('button', { name: 'Remove webhook' }).click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'device settings: remove-webhook dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });

  it("Then a Cloud API device's forget dialog has none", async () => {
    const { stack } = dashboard();
    // A device of the suite's own (its release forgets it) made the sandbox number, connected.
    const deviceId = `a11y-cloud-${Math.random().toString(36).slice(2, 6)}`;
    const token = await stack.createToken(deviceId);
    await stack.configureSandboxCloud(token);
    try {
      expect((await stack.api('POST', '/connect', undefined, token)).status).to.equal(200);
      // The section itself is swept by its own suite (src/cloud/e2e): here its dialog.
      const page = await open(`/dashboard/devices/${deviceId}`, `Settings of ${deviceId}`, (p) =>
        p.getByRole('region', { name: 'WhatsApp Cloud API' }).getByTestId('cloud-config'),
      );
      await page.getByRole('button', { name: 'Forget' }).click();
      await page.getByRole('dialog').waitFor();
      const problems = await audit(page, 'device settings: Cloud API forget dialog');
      await page.keyboard.press('Escape');
      expect(problems).to.deep.equal([]);
    } finally {
      // The simulator's sandbox number is the worker's: free it for the next suite.
      await stack.api('DELETE', '/cloud', undefined, token);
    }
  });

  it('Then a pool in edit and its delete dialog have none', async () => {
    const page = await open('/dashboard/pools', 'Pools');
    const create = page.getByRole('form', { name: 'New pool' });
    await create.getByLabel('Pool id').fill(poolId);
    await create.getByLabel('Name').fill('Axe shops');
    await create.getByRole('checkbox', { name: new RegExp(dashboard().stack.deviceId) }).check();
    await create.getByRole('button', { name: 'Create pool' }).click();
    await page.getByText('Pool “Axe shops” created.').waitFor();
    // The page with a pool made: the every-page sweep's.
    const row = page.getByTestId(`pool-${poolId}`);
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('button', { name: 'Cancel' }).waitFor();
    const problems = await audit(page, 'pools: edit');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'pools: delete dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });

  it('Then the Batches page has none', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/batches?device=${stack.deviceId}`, 'Batches', (p) =>
      p.locator('.chart-scroll'),
    );
    // The chart's numbers opened (the batch sent earlier is in them).
    await page.getByText('The numbers').click();
    await page.locator('.chart-numbers table').waitFor();
    await screenshots(page, 'a11y-batches');
    expect(await audit(page, 'batches')).to.deep.equal([]);
  });

  it('Then Settings → API with a new token, and its revoke dialog, have none', async () => {
    const page = await open('/dashboard/settings/api', 'Settings');
    // The page as it opens: the every-page sweep's.
    await page.getByLabel('Name').fill('axe token');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByTestId('new-token-value').waitFor();
    const problems = await audit(page, 'settings: new token');
    await page.locator('tr', { hasText: 'axe token' }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'settings: revoke dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });
});
