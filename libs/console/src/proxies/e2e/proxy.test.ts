import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe("Dashboard: a device's proxy in a real browser (chromium, whole stack)", function () {
  this.timeout(90_000);
  const PROXY_PASSWORD = 'dash-proxy-pw-123';

  const dashboard = useDashboardStack(this);

  it('When the admin sets, reads and removes a proxy, then the page never shows its credentials and the store has it sealed', async () => {
    const { stack, page } = dashboard();
    const { deviceId, redis } = stack;
    await page.goto(`${stack.apiUrl}/dashboard/devices/${deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByRole('region', { name: 'Proxy' });
    await section.getByText('No proxy of its own.').waitFor();

    // A URL that is no proxy URL: the API's 400, nothing stored.
    await section.getByLabel('Proxy URL').fill('ftp://127.0.0.1:21');
    await section.getByRole('button', { name: 'Save proxy' }).click();
    await section.getByText(/Invalid request/).waitFor();
    expect(await redis.exists(keys.deviceProxy(deviceId))).to.equal(0);

    await section.getByLabel('Proxy URL').fill(`socks5://dash:${PROXY_PASSWORD}@127.0.0.1:1080`);
    await section.getByRole('button', { name: 'Save proxy' }).click();
    await section.getByText(/Proxy saved\. No sender holds the device now/).waitFor();
    const current = section.getByTestId('proxy-current');
    await current.getByText('socks5://127.0.0.1:1080').waitFor();
    expect(await current.textContent()).to.include('yes (hidden)');
    expect(await section.getByLabel('Proxy URL').inputValue(), 'the field is cleared').to.equal('');
    expect(await page.content()).not.to.include(PROXY_PASSWORD);
    expect(await redis.get(keys.deviceProxy(deviceId))).not.to.include(PROXY_PASSWORD);
    await screenshots(page, 'device-proxy');

    // After a reload: where it is, never the credentials.
    await page.reload();
    await page.getByRole('region', { name: 'Proxy' }).getByText('socks5://127.0.0.1:1080').waitFor();
    expect(await page.content()).not.to.include(PROXY_PASSWORD);

    // Directly, past DEVICE_PROXY_URL: the setting replaces the proxy.
    await page
      .getByRole('region', { name: 'Proxy' })
      .getByRole('button', { name: 'Connect directly' })
      .click();
    await page.getByText(/The device connects directly\./).waitFor();
    await page
      .getByRole('region', { name: 'Proxy' })
      .getByTestId('proxy-current')
      .getByText(/not through DEVICE_PROXY_URL/)
      .waitFor();
    await screenshots(page, 'device-proxy-direct');
    expect(
      await page
        .getByRole('region', { name: 'Proxy' })
        .getByRole('button', { name: 'Connect directly' })
        .count(),
    ).to.equal(0);

    await page.getByRole('region', { name: 'Proxy' }).getByRole('button', { name: 'Remove proxy' }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await page.getByText(/Proxy removed\./).waitFor();
    await waitFor(async () => (await redis.exists(keys.deviceProxy(deviceId))) === 0, {
      what: 'proxy removed',
    });
  });
});
