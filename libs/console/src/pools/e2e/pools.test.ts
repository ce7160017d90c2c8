import { expect } from 'chai';
import { PoolStore, SessionStore, TokenStore, clearRestriction, markRestricted } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe('Dashboard: the Pools page in a real browser (chromium, whole stack)', function () {
  this.timeout(120_000);

  const dashboard = useDashboardStack(this);
  const suffix = Math.random().toString(36).slice(2, 6);
  // Devices the page knows from their session records: two connected, one that logged out.
  const shop1 = `shop-1-${suffix}`;
  const shop2 = `shop-2-${suffix}`;
  const spare = `spare-${suffix}`;
  const poolId = `shops-${suffix}`;

  it('When the admin creates, edits and deletes a pool, and links a token to it, then the store follows and a linked pool cannot be deleted', async () => {
    const { stack, page } = dashboard();
    const { redis } = stack;
    const sessions = new SessionStore(redis);
    await sessions.update(shop1, 'connected', { name: 'Shop one', phone: '15550001001' });
    await sessions.update(shop2, 'connected', { name: 'Shop two', phone: '15550001002' });
    await sessions.markDisconnected(spare, 'logged_out');
    const pools = new PoolStore(redis);

    await page.goto(`${stack.apiUrl}/dashboard/pools`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Pools', level: 1 }).waitFor();
    expect(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Pools' })
        .getAttribute('aria-current'),
    ).to.equal('page');
    await page.getByText('No pools yet. Create one above.').waitFor();

    // A bad id: the API's 400 names the field, nothing is stored.
    const create = page.getByRole('form', { name: 'New pool' });
    await create.getByLabel('Pool id').fill('Bad Id');
    await create.getByLabel('Name').fill('Shops');
    await create.getByRole('checkbox', { name: new RegExp(shop1) }).check();
    await create.getByRole('button', { name: 'Create pool' }).click();
    await create.getByText(/id must be a pool id/).waitFor();
    expect((await pools.list()).map((p) => p.name)).not.to.include('Shops');

    // Two known devices ticked and one not linked yet, typed.
    await create.getByLabel('Pool id').fill(poolId);
    await create.getByRole('checkbox', { name: new RegExp(shop2) }).check();
    await create.getByLabel(/Other device ids/).fill('shop-later');
    await create.getByRole('button', { name: 'Create pool' }).click();
    await page.getByText('Pool “Shops” created.').waitFor();
    const row = page.getByTestId(`pool-${poolId}`);
    await row.getByTestId(`pool-device-${shop1}`).getByText('Connected').waitFor();
    await row.getByTestId('pool-device-shop-later').getByText('not linked').waitFor();
    expect((await pools.get(poolId))!.devices).to.deep.equal([shop1, shop2, 'shop-later']);

    // Edit: rename, and swap a device for the spare one.
    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: `Edit pool ${poolId}` });
    expect(await edit.getByLabel('Pool id').isDisabled()).to.equal(true);
    await edit.getByLabel('Name').fill('Shop senders');
    await edit.getByRole('checkbox', { name: new RegExp(shop2) }).uncheck();
    await edit.getByRole('checkbox', { name: new RegExp(spare) }).check();
    await edit.getByRole('button', { name: 'Save pool' }).click();
    await page.getByText('Pool “Shop senders” saved.').waitFor();
    await row.getByTestId(`pool-device-${spare}`).getByText('Disconnected').waitFor();
    const saved = (await pools.get(poolId))!;
    expect(saved).to.include({ name: 'Shop senders' });
    expect(saved.devices).to.deep.equal([shop1, 'shop-later', spare]);
    await row
      .getByTestId(`pool-device-${shop1}`)
      .getByText(/health \d+/)
      .waitFor();
    // Time-locked by WhatsApp: still in the pool, out of its spread (its waiting messages move).
    await markRestricted(redis, shop1, 'reachout_timelock', Date.now() + 60_000);
    await row
      .getByTestId(`pool-device-out-${shop1}`)
      .getByText('out of the spread: paused by WhatsApp')
      .waitFor();
    await screenshots(page, 'pools');
    await clearRestriction(redis, shop1);

    // The Tokens page links a token to the pool.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Name').fill('pool sender');
    await page.getByLabel('Link the token to').selectOption('pool');
    await page.getByLabel('Pool', { exact: true }).selectOption(poolId);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('Token “pool sender” created').waitFor();
    const token = (await new TokenStore(redis).list()).find((t) => t.name === 'pool sender')!;
    expect(token).to.include({ poolId }).and.not.to.have.property('deviceId');
    await page.getByTestId(`token-${token.id}`).getByText(poolId).waitFor();
    await screenshots(page, 'tokens-pool');

    // Delete while the token sends through it: the API's 409 text, and the pool stays.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Pools' }).click();
    await page.getByTestId(`pool-${poolId}`).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText(/Pool has API tokens linked to it: revoke them first/).waitFor();
    expect(await page.getByRole('alert').textContent()).to.include(token.id);
    expect(await pools.get(poolId)).not.to.equal(undefined);
    await screenshots(page, 'pools-delete-refused');

    // Revoked, the pool goes.
    await new TokenStore(redis).revoke(token.id);
    await page.getByTestId(`pool-${poolId}`).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('Pool “Shop senders” deleted.').waitFor();
    await waitFor(async () => (await pools.get(poolId)) === undefined, { what: 'pool deleted' });
    // The page reloads its list after the message: the row leaves once that answer is in.
    await page.getByTestId(`pool-${poolId}`).waitFor({ state: 'detached', timeout: 10_000 });
    expect(await page.getByTestId(`pool-${poolId}`).count()).to.equal(0);
  });

  it('When the devices fail to load, then the form says so instead of showing none, and its next poll brings them', async () => {
    const { stack, page } = dashboard();
    const late = `late-${suffix}`;
    await new SessionStore(stack.redis).update(late, 'connected', { name: 'Late one', phone: '15550001003' });
    // The first two loads of the devices answer 503 (an API under load); the next poll gets through.
    let asked = 0;
    await page.route(/\/devices$/, (route) =>
      ++asked <= 2
        ? route.fulfill({
            status: 503,
            contentType: 'application/json',
            body: JSON.stringify({ success: false, error: 'Service unavailable' }),
          })
        : route.continue(),
    );
    try {
      await page.goto(`${stack.apiUrl}/dashboard/pools`);
      // Signed in by the test before, or not (this test alone).
      const signIn = page.getByLabel('Admin password');
      await page.getByRole('heading', { name: 'Pools', level: 1 }).or(signIn).waitFor();
      if (await signIn.isVisible()) {
        await signIn.fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in' }).click();
      }
      const create = page.getByRole('form', { name: 'New pool' });
      const alert = page.getByRole('alert').filter({ hasText: 'Could not load the devices' });
      await alert.waitFor();
      await screenshots(page, 'pools-devices-unloaded');
      await create.getByRole('checkbox', { name: new RegExp(late) }).waitFor({ timeout: 20_000 });
      await alert.waitFor({ state: 'detached' });
      expect(asked).to.be.greaterThan(2);
    } finally {
      await page.unroute(/\/devices$/);
    }
  });
});
