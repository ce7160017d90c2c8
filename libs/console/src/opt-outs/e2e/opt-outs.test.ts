import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { isOptedOut, optOut, readOptOutSettings } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe("Dashboard: a device's opt-outs in a real browser (chromium, whole stack)", function () {
  this.timeout(90_000);

  let page: Page;
  const dashboard = useDashboardStack(this);
  const stack = () => dashboard().stack;
  before(() => {
    page = dashboard().page;
  });

  it('When the admin opens a device, then its opt-outs list, add, remove and the confirmation switch work and reach the store', async () => {
    const { deviceId, redis } = stack();
    const wroteStop = '15550900001';
    await optOut(redis, deviceId, wroteStop, 'keyword');
    await page.goto(`${stack().apiUrl}/dashboard/devices/${deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const section = page.getByTestId('opt-outs');
    await section.getByRole('heading', { name: 'Opt-outs' }).waitFor();
    await section.getByTestId(`opt-out-${wroteStop}`).waitFor();
    expect(await section.getByTestId('opt-outs-total').textContent()).to.equal('1 suppressed number');

    // Add: a number typed with its plus and spaces is suppressed.
    await section.getByLabel('Number to suppress').fill('+1 555 090 0002');
    await section.getByRole('button', { name: 'Suppress' }).click();
    await section.getByText('+15550900002 gets no more messages.').waitFor();
    await section.getByTestId('opt-out-15550900002').waitFor();
    expect(await isOptedOut(redis, deviceId, '15550900002')).to.equal(true);
    // Newest first.
    const rows = await section
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-testid')));
    expect(rows).to.deep.equal(['opt-out-15550900002', `opt-out-${wroteStop}`]);

    // A number that is not one: the API's message, nothing added.
    await section.getByLabel('Number to suppress').fill('12');
    await section.getByRole('button', { name: 'Suppress' }).click();
    await section.getByText(/Invalid request data/).waitFor();
    expect(await section.locator('tbody tr').count()).to.equal(2);

    // The confirmation switch.
    const box = section.getByLabel('Send a confirmation message');
    expect(await box.isChecked()).to.equal(true);
    await box.click();
    await section.getByText('Confirmations are off.').waitFor();
    expect((await readOptOutSettings(redis, deviceId)).settings.confirmation).to.equal(false);
    await screenshots(page, 'device-opt-outs');

    // Remove.
    await section.getByRole('button', { name: `Remove +${wroteStop}` }).click();
    await section.getByText(`+${wroteStop} may get messages again.`).waitFor();
    await waitFor(async () => (await section.getByTestId(`opt-out-${wroteStop}`).count()) === 0, {
      what: 'row removed',
    });
    expect(await isOptedOut(redis, deviceId, wroteStop)).to.equal(false);
    expect(await section.getByTestId('opt-outs-total').textContent()).to.equal('1 suppressed number');
  });
});
