import { expect } from 'chai';
import { ADMIN_TOKENS, TokenStore } from '@mgw/store';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

/**
 * Settings → API in a real browser: API tokens and admin tokens (made by the token CLI) in one
 * list, with when each was last used, a filter, and Revoke for either kind.
 */
describe('Dashboard: Settings → API lists API and admin tokens (chromium, whole stack)', function () {
  this.timeout(120_000);

  const dashboard = useDashboardStack(this);
  const suffix = Math.random().toString(36).slice(2, 6);

  it('When an API token was used and an admin token exists, then both are listed with their last use, the filter narrows the list, and revoking the admin token on the page ends it', async () => {
    const { stack, page } = dashboard();
    const apiTokens = new TokenStore(stack.redis);
    const adminTokens = new TokenStore(stack.redis, ADMIN_TOKENS);
    const used = await apiTokens.create({ name: `shop backend ${suffix}`, deviceId: `shop-${suffix}` });
    const admin = await adminTokens.create({ name: `ci deploy ${suffix}`, expiresInMs: 30 * 86_400_000 });
    // A list of some length, so the filter has something to narrow.
    for (let i = 1; i <= 6; i++) await apiTokens.create({ name: `docs example ${i}`, deviceId: `docs-${i}` });

    const status = await fetch(`${stack.apiUrl}/api/messenger/v1/status`, {
      headers: { authorization: `Bearer ${used.value}` },
    });
    expect(status.status).to.equal(200);
    const adminCall = (token: string) =>
      fetch(`${stack.apiUrl}/api/admin/v1/devices`, { headers: { authorization: `Bearer ${token}` } });

    await page.goto(`${stack.apiUrl}/dashboard/settings/api`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();

    const usedRow = page.getByTestId(`token-${used.token.id}`);
    const adminRow = page.getByTestId(`token-${admin.token.id}`);
    // The use is written in the background: the page polls, a reload shows it at once.
    for (
      let i = 0;
      i < 20 && (await usedRow.locator('td[data-label="Last used"]').textContent()) === 'never';
      i++
    ) {
      await page.waitForTimeout(250);
      await page.reload();
      await usedRow.waitFor();
    }
    expect(await usedRow.locator('td[data-label="Last used"]').textContent()).to.equal('just now');
    expect(await usedRow.locator('td[data-label="Kind"]').textContent()).to.equal('API');
    expect(await usedRow.locator('td[data-label="Device or pool"]').textContent()).to.equal(`shop-${suffix}`);
    const idCell = usedRow.locator('td[data-label="Id"]');
    // The whole id as text, at every width (a tooltip is out of a phone's reach).
    expect(await idCell.textContent()).to.equal(used.token.id);
    expect(await adminRow.locator('td[data-label="Kind"]').textContent()).to.equal('Admin');
    expect(await adminRow.locator('td[data-label="Last used"]').textContent()).to.equal('never');
    expect(await adminRow.locator('td[data-label="Name"]').textContent()).to.equal(`ci deploy ${suffix}`);
    // Newest used first.
    const firstRow = page.locator('tbody tr').first();
    expect(await firstRow.getAttribute('data-testid')).to.equal(`token-${used.token.id}`);
    // The stack may hold tokens of its own besides these eight.
    const total = await page.locator('tbody tr').count();
    expect(total).to.be.at.least(8);
    await screenshots(page, 'tokens-both-kinds');

    // The filter: by name, by id, by device.
    const filter = page.getByLabel('Filter tokens');
    await filter.fill('docs example');
    expect(await page.locator('tbody tr').count()).to.equal(6);
    await page.getByText(`6 of ${total} tokens`).waitFor();
    await filter.fill(admin.token.id);
    expect(await page.locator('tbody tr').count()).to.equal(1);
    await adminRow.waitFor();
    await filter.fill(`SHOP-${suffix}`);
    expect(await page.locator('tbody tr').count()).to.equal(1);
    await usedRow.waitFor();
    await filter.fill('nothing like this');
    await page.getByText('No token matches “nothing like this”.').waitFor();
    await filter.fill('');
    expect(await page.locator('tbody tr').count()).to.equal(total);

    // Revoke the admin token, after the confirmation.
    expect((await adminCall(admin.value)).status).to.equal(200);
    await adminRow.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Automation using this admin token gets 401').waitFor();
    await screenshots(page, 'tokens-revoke-admin');
    await dialog.getByRole('button', { name: 'Yes, revoke' }).click();
    await page.getByText(`Admin token “ci deploy ${suffix}” revoked`).waitFor();
    await adminRow.waitFor({ state: 'detached' });
    const refused = await adminCall(admin.value);
    expect(refused.status).to.equal(401);
    expect(await refused.json()).to.deep.equal({ success: false, error: 'Admin authentication required' });
    // The API token is untouched.
    expect(
      (
        await fetch(`${stack.apiUrl}/api/messenger/v1/status`, {
          headers: { authorization: `Bearer ${used.value}` },
        })
      ).status,
    ).to.equal(200);
  });
});
