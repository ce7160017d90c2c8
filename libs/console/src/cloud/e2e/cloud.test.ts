/**
 * A device's WhatsApp Cloud API number in a real browser (Debian's chromium, whole stack), with the
 * Graph API played by the Cloud API simulator (`stack.cloud`, the sandbox's number): the operator
 * gives a device the number's credentials through the form (Meta's refusal of a wrong token first,
 * next to the field it names), connects it, finds it on the Devices page (its engine's badge, the
 * link panel's Connect instead of a QR) and forgets it behind the confirmation; no secret is ever
 * in the page after a request. A workspace's agent sees a number and no control. Axe and the
 * overflow check at 1366 and 390 px on each state, with its screenshots (the artifacts directory).
 *
 * The tests run on the mocha worker's shared stack and chromium (useDashboardStack: the device the
 * first test configures is the suite's own, so its release forgets it should a test stop half-way).
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { SANDBOX_NUMBER, SANDBOX_VERIFY_TOKEN } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import {
  ADMIN_API_TOKEN,
  ADMIN_PASSWORD as PASSWORD,
  newLaptopContext,
  useDashboardStack,
} from '../../../test/browser.js';
import { sweepPage } from '../../../test/sweep.js';

describe("Dashboard: a device's WhatsApp Cloud API number in a real browser (chromium, whole stack, Cloud API simulator)", function () {
  this.timeout(180_000);
  const dashboard = useDashboardStack(this);

  const WRONG_TOKEN = `EAAwrong${randomBytes(6).toString('hex')}token`;
  const APP_SECRET = `app-secret-${randomBytes(6).toString('hex')}`;
  /** Every secret typed in this suite: none may be in the page once its request has left. */
  const SECRETS = [SANDBOX_NUMBER.accessToken, WRONG_TOKEN, APP_SECRET, SANDBOX_VERIFY_TOKEN];

  const section = (page: Page) => page.getByRole('region', { name: 'WhatsApp Cloud API' });
  const field = (page: Page, label: string) => section(page).getByLabel(label, { exact: true });
  /** Axe and the overflow check at both widths, and the two screenshots, in one pass. */
  const sweep = async (page: Page, name: string) => {
    const found = await sweepPage(page, name, `cloud-${name}`);
    expect(found.axe, `axe on ${name}`).to.deep.equal([]);
    expect(found.overflow, `overflow on ${name}`).to.deep.equal([]);
  };
  /** The page's markup, every field's value and the browser's storage: where a secret could stay. */
  const noSecretInPage = async (page: Page, when: string) => {
    const values = await page
      .locator('input, textarea')
      .evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
    const storage = (await page.evaluate(
      'JSON.stringify([{ ...localStorage }, { ...sessionStorage }])',
    )) as string;
    const html = await page.content();
    for (const secret of SECRETS) {
      expect(html, `${when}: the page's markup`).not.to.include(secret);
      expect(values.join('\n'), `${when}: a field's value`).not.to.include(secret);
      expect(storage, `${when}: the browser's storage`).not.to.include(secret);
    }
  };
  const fillCredentials = async (page: Page, accessToken: string, verifyToken: string) => {
    await field(page, 'Phone-number ID').fill(SANDBOX_NUMBER.id);
    await field(page, 'WhatsApp Business Account ID').fill(SANDBOX_NUMBER.wabaId);
    await field(page, 'Access token').fill(accessToken);
    await field(page, 'App secret').fill(APP_SECRET);
    await field(page, 'Verify token').fill(verifyToken);
  };
  const statusOf = (where: Locator) => where.getByTestId('cloud-status').getAttribute('data-status');

  it('When the operator gives a device the number’s credentials, connects it and forgets it, then the page shows what Meta says of it and never a secret', async () => {
    const { stack, page } = dashboard();
    const { deviceId, redis } = stack;
    await page.goto(`${stack.apiUrl}/dashboard/devices/${deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const cloud = section(page);
    await cloud.getByTestId('cloud-none').getByText('Not a Cloud API number.').waitFor();
    // A device not linked yet: the section opens the page, before the account's profile.
    await page.getByRole('region', { name: 'Profile' }).waitFor();
    const headings = await page.locator('.device-settings h2').allTextContents();
    expect(headings[0]).to.equal('WhatsApp Cloud API');
    for (const label of ['Access token', 'App secret', 'Verify token']) {
      expect(await field(page, label).getAttribute('type'), label).to.equal('password');
      expect(await field(page, label).getAttribute('autocomplete'), label).to.equal('off');
    }
    const save = cloud.getByRole('button', { name: 'Save and check with Meta' });
    expect(await save.isDisabled(), 'nothing typed yet').to.equal(true);

    // A field the API refuses (its 400): marked with what the API said of it, nothing stored.
    await fillCredentials(page, SANDBOX_NUMBER.accessToken, SANDBOX_VERIFY_TOKEN);
    const throughput = field(page, 'Throughput (messages/s)');
    await throughput.fill('5000');
    await save.click();
    await cloud.locator('#cloud-throughputPerSecond-error').getByText(/1000/).waitFor();
    expect(await throughput.getAttribute('aria-invalid')).to.equal('true');
    expect(await redis.exists(keys.cloudDevice(deviceId)), 'nothing stored').to.equal(0);
    await throughput.fill('');

    // A token Meta does not know: its refusal next to the form, the token field marked with Meta's words.
    await fillCredentials(page, WRONG_TOKEN, SANDBOX_VERIFY_TOKEN);
    await save.click();
    await cloud
      .getByRole('alert')
      .getByText("The Graph API refused the device's Cloud API credentials: see the field marked above.")
      .waitFor();
    expect(await throughput.getAttribute('aria-invalid'), 'the earlier mark is gone').to.equal(null);
    const token = field(page, 'Access token');
    expect(await token.getAttribute('aria-invalid')).to.equal('true');
    const said = cloud.locator('#cloud-accessToken-error');
    expect(await said.textContent()).to.match(/^Meta \(error 190\/467\): /);
    expect(await token.getAttribute('aria-describedby')).to.include('cloud-accessToken-error');
    expect(await field(page, 'Phone-number ID').getAttribute('aria-invalid')).to.equal(null);
    // The secrets left with the request; the ids stay for the next try.
    for (const label of ['Access token', 'App secret', 'Verify token'])
      expect(await field(page, label).inputValue(), label).to.equal('');
    expect(await field(page, 'Phone-number ID').inputValue()).to.equal(SANDBOX_NUMBER.id);
    expect(await redis.exists(keys.cloudDevice(deviceId)), 'nothing stored').to.equal(0);
    await noSecretInPage(page, 'after the refusal');
    await sweep(page, 'refused');

    // The sandbox number's own credentials, with a throughput of its own.
    await fillCredentials(page, SANDBOX_NUMBER.accessToken, SANDBOX_VERIFY_TOKEN);
    await field(page, 'Throughput (messages/s)').fill('20');
    await save.click();
    await cloud
      .getByText(
        `Saved. Meta knows the number as ${SANDBOX_NUMBER.verifiedName} (${SANDBOX_NUMBER.displayPhoneNumber}). Connect it to send.`,
      )
      .waitFor();
    const config = cloud.getByTestId('cloud-config');
    for (const shown of [
      SANDBOX_NUMBER.id,
      SANDBOX_NUMBER.wabaId,
      '20 messages/s',
      'v21.0',
      'verification_code',
    ])
      await config.getByText(shown).waitFor();
    expect(await statusOf(cloud)).to.equal('disconnected');
    await cloud.getByText('Not connected yet: Connect checks the credentials with Meta again.').waitFor();
    expect(await cloud.locator('input').count(), 'the form closed').to.equal(0);
    // No WhatsApp connection of the device's own: the sections that act through one are gone.
    for (const name of ['Profile', 'Presence', 'Usernames', 'Proxy', 'Blocklist'])
      expect(await page.getByRole('region', { name, exact: true }).count(), name).to.equal(0);
    await page.getByRole('region', { name: 'Webhook' }).waitFor();
    expect(await cloud.getByTestId('cloud-callback-url').textContent()).to.equal(
      `${stack.apiUrl}/api/cloud/v1/webhook`,
    );
    const sealed = (await redis.get(keys.cloudDevice(deviceId))) ?? '';
    expect(sealed, 'stored').not.to.equal('');
    for (const secret of SECRETS) expect(sealed, 'sealed at rest').not.to.include(secret);
    await noSecretInPage(page, 'after saving');

    await cloud.getByRole('button', { name: 'Connect' }).click();
    await cloud.getByText(/^Connected: Meta accepted the credentials/).waitFor();
    await waitFor(async () => (await statusOf(cloud)) === 'connected', {
      what: 'the section says connected',
    });
    const state = cloud.getByTestId('cloud-state');
    await state.getByText(SANDBOX_NUMBER.verifiedName).waitFor();
    await state.getByText(SANDBOX_NUMBER.displayPhoneNumber).waitFor();
    expect(await state.getByTestId('cloud-quality').textContent()).to.equal('High (green)');
    await state.getByText('1,000 new contacts / 24 h').waitFor();
    expect(await redis.sismember(keys.linkedDevices(), deviceId)).to.equal(1);
    await noSecretInPage(page, 'once connected');
    await sweep(page, 'connected');
    // After a reload too: what the API answers holds no secret.
    await page.reload();
    await section(page).getByTestId('cloud-state').getByText(SANDBOX_NUMBER.verifiedName).waitFor();
    await noSecretInPage(page, 'after a reload');

    // The Devices page: the engine's badge, and a link panel that offers Connect, never a QR.
    await page.getByRole('link', { name: '← Devices' }).click();
    const row = page.getByTestId(`device-${deviceId}`);
    await row.getByTestId(`device-engine-${deviceId}`).getByText('Cloud API').waitFor();
    await row.getByText(SANDBOX_NUMBER.verifiedName).waitFor();
    expect(await page.locator('[data-testid^="device-engine-"]').count(), 'only the cloud device').to.equal(
      1,
    );
    const panel = page.getByRole('region', { name: 'Link a device' });
    await panel.getByLabel('Device ID').fill(deviceId);
    await panel.getByTestId('link-cloud').waitFor();
    expect(await panel.getByRole('button', { name: /Link with/ }).count()).to.equal(0);
    expect(await panel.getByLabel('Phone number (for a pairing code)').count()).to.equal(0);
    await panel.getByRole('button', { name: 'Connect' }).click();
    await panel.getByText(`${deviceId} is connected: Meta accepted its credentials.`).waitFor();
    await sweep(page, 'devices');

    // From the panel to the section; new credentials are checked as the first were.
    await panel.getByRole('link', { name: 'Cloud API settings' }).click();
    await section(page).getByTestId('cloud-config').waitFor();
    expect(new URL(page.url()).hash).to.equal('#cloud');
    await cloud.getByRole('button', { name: 'Replace credentials' }).click();
    await fillCredentials(page, WRONG_TOKEN, SANDBOX_VERIFY_TOKEN);
    await cloud.getByRole('button', { name: 'Save new credentials' }).click();
    await cloud
      .locator('#cloud-accessToken-error')
      .getByText(/^Meta \(error 190\/467\)/)
      .waitFor();
    expect(await statusOf(cloud), 'a refused replacement changes nothing').to.equal('connected');
    await noSecretInPage(page, 'after a refused replacement');
    await cloud.getByRole('button', { name: 'Cancel' }).click();
    expect(await cloud.locator('input').count()).to.equal(0);

    // Forget: behind the confirmation; cancelled first, then taken.
    await cloud.getByRole('button', { name: 'Forget' }).click();
    const dialog = page.getByRole('dialog', { name: `Forget the Cloud API number of ${deviceId}?` });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await redis.exists(keys.cloudDevice(deviceId))).to.equal(1);
    await cloud.getByRole('button', { name: 'Forget' }).click();
    await dialog.getByRole('button', { name: 'Yes, forget it' }).click();
    await cloud.getByText(/^Forgotten: the credentials are deleted/).waitFor();
    await cloud.getByTestId('cloud-none').waitFor();
    expect(await redis.exists(keys.cloudDevice(deviceId))).to.equal(0);
    expect(await redis.sismember(keys.linkedDevices(), deviceId)).to.equal(0);
    expect(await redis.hget(keys.cloudNumbers(), SANDBOX_NUMBER.id)).to.equal(null);
  });

  it('When an agent of a workspace opens its Cloud API device, then it sees the number and no control, and a device that is none says so without the form', async () => {
    const { stack, browser } = dashboard();
    const suffix = randomBytes(3).toString('hex');
    const workspace = `cloud-${suffix}`;
    const agent = { user: `cloud.agent-${suffix}`, password: 'cloud agent password 1' };
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await stack.adminApi(ADMIN_API_TOKEN, method, path, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.lessThan(300);
      return res.body as Record<string, unknown>;
    };
    // A number of the workspace's own on the simulator: the suite's first test may hold the sandbox's.
    const number = {
      ...SANDBOX_NUMBER,
      id: `3${Date.now()}`.slice(0, 15),
      wabaId: `4${Date.now()}`.slice(0, 15),
      displayPhoneNumber: '+1 555-010-0042',
      verifiedName: 'Agent Test Shop',
      accessToken: `EAAagent${suffix}`,
      appSecret: `agent-secret-${suffix}`,
    };
    stack.cloud.addNumber(number);
    await admin('POST', '/workspaces', { id: workspace, name: 'Cloud Shop' });
    const made = await admin('POST', `/workspaces/${workspace}/devices`);
    const deviceId = (made.device as { deviceId: string }).deviceId;
    const other = ((await admin('POST', `/workspaces/${workspace}/devices`)).device as { deviceId: string })
      .deviceId;
    await admin('PUT', `/devices/${deviceId}/cloud`, {
      phoneNumberId: number.id,
      wabaId: number.wabaId,
      accessToken: number.accessToken,
      appSecret: number.appSecret,
      verifyToken: `verify-${suffix}`,
    });
    await admin('POST', `/devices/${deviceId}/connect`, {});
    await admin('POST', `/workspaces/${workspace}/users`, { ...agent, role: 'agent' });

    const context = await newLaptopContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(`${stack.apiUrl}/dashboard/devices/${deviceId}`);
      await page.getByLabel('User name').fill(agent.user);
      await page.getByLabel('Password', { exact: true }).fill(agent.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const cloud = section(page);
      await cloud.getByTestId('cloud-state').getByText(number.verifiedName).waitFor();
      expect(await statusOf(cloud)).to.equal('connected');
      await cloud.getByTestId('cloud-config').getByText(number.id).waitFor();
      expect(
        await cloud.getByRole('button').allTextContents(),
        'no control but copying the URL',
      ).to.deep.equal(['Copy URL']);
      expect(await cloud.locator('input').count()).to.equal(0);
      await sweep(page, 'agent');

      await page.goto(`${stack.apiUrl}/dashboard/devices/${other}`);
      await section(page).getByTestId('cloud-none').waitFor();
      expect(await section(page).getByTestId('cloud-none').textContent()).to.equal('Not a Cloud API number.');
      expect(await section(page).locator('input, button').count()).to.equal(0);
    } finally {
      await context.close();
      await stack.adminApi(ADMIN_API_TOKEN, 'DELETE', `/devices/${deviceId}/cloud`);
    }
  });
});
