import { expect } from 'chai';
import sharp from 'sharp';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe("Dashboard: a device's profile and blocklist in a real browser (chromium, whole stack, simulator)", function () {
  this.timeout(150_000);

  interface SimProfile {
    name: string;
    about: string | null;
    picture: { bytes: number } | null;
    blocked: { lid: string; phone: string | null }[];
  }

  const dashboard = useDashboardStack(this);
  const account = '15552500001';
  const [blockedA, blockedB] = ['15552500011', '15552500012'];

  it('When the operator changes the name, about and photo and blocks and unblocks numbers, then WhatsApp has each change', async () => {
    const { stack, page } = dashboard();
    const simProfile = () => stack.simApi<SimProfile>('GET', `/accounts/${account}/profile`);
    for (const phone of [blockedA, blockedB]) await stack.simApi('POST', '/contacts', { phone });
    await stack.linkByQr(account, 'Dash Account');

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const profile = page.getByRole('region', { name: 'Profile' });
    await profile.getByTestId('profile-current').getByText(account).waitFor();
    expect(await profile.getByLabel('Name').inputValue()).to.equal('Dash Account');

    await profile.getByLabel('Name').fill('Bike Shop');
    await profile.getByLabel('About').fill('Repairs while you wait');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await profile.getByText('Profile saved.').waitFor();
    await waitFor(async () => (await simProfile()).name === 'Bike Shop', { what: 'the name at WhatsApp' });
    expect((await simProfile()).about).to.equal('Repairs while you wait');

    const png = await sharp({ create: { width: 80, height: 80, channels: 3, background: '#cc6633' } })
      .png()
      .toBuffer();
    await profile
      .getByLabel(/^Photo/)
      .setInputFiles({ name: 'shop.png', mimeType: 'image/png', buffer: png });
    await profile.getByRole('button', { name: 'Set photo' }).click();
    await profile.getByText('Photo set.').waitFor();
    expect((await simProfile()).picture, 'WhatsApp has a photo').to.not.equal(null);
    await profile.getByTestId('profile-current').getByText('set', { exact: true }).waitFor();

    const blocklist = page.getByRole('region', { name: 'Blocklist' });
    await blocklist.getByTestId('blocklist-empty').waitFor();
    await blocklist.getByLabel('Number to block').fill(blockedA);
    await blocklist.getByRole('button', { name: 'Block' }).click();
    await blocklist.getByText('Blocked.').waitFor();
    await blocklist.getByTestId('blocklist').getByText(blockedA).waitFor();
    expect((await simProfile()).blocked.map((b) => b.phone)).to.deep.equal([blockedA]);
    // The phone blocks another number: after a reload the page lists both.
    await stack.simApi('POST', `/accounts/${account}/blocklist`, { contact: blockedB, action: 'block' });
    await waitFor(
      async () => {
        await page.reload();
        await page.getByRole('region', { name: 'Blocklist' }).getByTestId('blocklist').waitFor();
        return (await page.getByTestId('blocklist').locator('tbody tr').count()) === 2;
      },
      { timeoutMs: 15_000, what: 'the pushed block listed' },
    );
    await screenshots(page, 'device-profile-blocklist');

    const row = page.getByTestId('blocklist').locator('tr', { hasText: blockedA });
    await row.getByRole('button', { name: 'Unblock' }).click();
    await page.getByText(`Unblocked +${blockedA}.`).waitFor();
    await waitFor(async () => (await simProfile()).blocked.length === 1, { what: 'the unblock at WhatsApp' });
    expect(await page.getByTestId('blocklist').locator('tbody tr').count()).to.equal(1);
    // The one the phone blocked is known by its LID only (the device never met it): unblocked so.
    await page.getByTestId('blocklist').getByRole('button', { name: 'Unblock' }).click();
    await page.getByTestId('blocklist-empty').waitFor();
    await waitFor(async () => (await simProfile()).blocked.length === 0, { what: 'the LID unblocked' });

    await page.getByRole('region', { name: 'Profile' }).getByRole('button', { name: 'Remove photo' }).click();
    await page.getByText('Photo removed.').waitFor();
    expect((await simProfile()).picture).to.equal(null);
    await screenshots(page, 'device-profile-blocklist-after');
  });
});
