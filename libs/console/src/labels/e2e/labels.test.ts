import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { audit } from '../../../test/axe.js';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';
import { overflowingInPane as overflowing } from '../../../test/overflow.js';

describe('Dashboard: the Labels tab — create, rename, recolour and delete the account’s labels (chromium, whole stack, simulator)', function () {
  this.timeout(240_000);

  /** What the simulator's phone holds of the account's labels (GET /accounts/:phone/app-state). */
  interface AppStateView {
    labels: Record<string, { name: string; color?: number; deleted?: boolean }>;
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552900001';

  it('When the operator creates, edits and deletes a label, then the tab lists it with its colour’s name, the phone has each change, and a label made on the phone shows', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Labels Shop');
    const view = () => stack.simApi<AppStateView>('GET', `/accounts/${ACCOUNT}/app-state`);

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/labels`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('No labels yet').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('link', { name: 'Labels' }).getAttribute('aria-current')).to.equal('page');
    await screenshots(page, 'labels-empty');

    // Before the phone shared its app-state key, a create is refused with the reason.
    await page.getByLabel('New label').fill('VIP');
    await page.getByLabel('Colour').selectOption({ label: 'Sea green' });
    await page.getByRole('button', { name: 'Create' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /app-state key/ })
      .waitFor({ timeout: 40_000 });

    await stack.simApi('POST', `/accounts/${ACCOUNT}/app-state/key-share`);
    // The key reaches the device moments later: a label made and deleted through the public API says so.
    await waitFor(
      async () => {
        const probe = await stack.api<{ data: { label: { id: string } } }>('POST', '/labels', {
          name: 'Probe',
        });
        if (probe.status !== 200) return false;
        expect((await stack.api('DELETE', `/labels/${probe.body.data.label.id}`)).status).to.equal(200);
        return true;
      },
      { timeoutMs: 30_000, what: 'the app-state key at the device' },
    );
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('status').filter({ hasText: 'Label “VIP” created.' }).waitFor({ timeout: 40_000 });
    const id = Object.entries((await view()).labels).find(([, l]) => l.name === 'VIP')?.[0] ?? '';
    expect((await view()).labels[id]).to.deep.include({ name: 'VIP', color: 5 });
    const row = page.getByTestId(`label-${id}`);
    await row.waitFor({ timeout: 20_000 });
    expect(await row.getByRole('cell').nth(1).innerText()).to.equal('Sea green');
    expect(await row.getByRole('cell').nth(2).innerText()).to.equal('0');

    // Rename and recolour in the dialog.
    await row.getByRole('button', { name: 'Edit VIP' }).click();
    const dialog = page.getByRole('dialog', { name: /Edit the label/ });
    await dialog.waitFor();
    expect(await audit(page, 'labels-edit-dialog')).to.deep.equal([]);
    await screenshots(page, 'labels-edit-dialog');
    await dialog.getByLabel('Name').fill('عملاء VIP');
    await dialog.getByLabel('Colour').selectOption({ label: 'Violet' });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached', timeout: 40_000 });
    await waitFor(async () => (await view()).labels[id]?.name === 'عملاء VIP', {
      timeoutMs: 20_000,
      what: 'the phone has the new name',
    });
    expect((await view()).labels[id]).to.deep.include({ color: 8 });
    await waitFor(async () => (await row.getByRole('cell').nth(1).innerText()) === 'Violet', {
      timeoutMs: 20_000,
      what: 'the new colour listed',
    });

    // A label made on the phone shows (the live label.edited event).
    await stack.simApi('POST', `/accounts/${ACCOUNT}/labels`, {
      id: '77',
      name: 'Made on the phone',
      color: 1,
    });
    await page.getByTestId('label-77').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('label-77').getByRole('cell').nth(1).innerText()).to.equal('Sky blue');
    await row.getByRole('button', { name: /Show chats/ }).click();
    await page.getByText('No chat carries this label').waitFor({ timeout: 15_000 });
    await screenshots(page, 'labels-list');
    expect(await audit(page, 'labels-page')).to.deep.equal([]);
    expect(await overflowing(page, '[data-testid="labels"]')).to.deep.equal([]);

    // Delete, confirmed: it leaves the list and the phone has it deleted.
    await page.getByTestId('label-77').getByRole('button', { name: 'Delete Made on the phone' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete the label?' });
    await confirm.waitFor();
    expect(await audit(page, 'labels-delete-confirm')).to.deep.equal([]);
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('label-77').waitFor({ state: 'detached', timeout: 40_000 });
    expect((await view()).labels['77']).to.deep.include({ deleted: true });
    expect(await page.getByTestId(`label-${id}`).count()).to.equal(1);
  });
});
