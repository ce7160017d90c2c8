/**
 * A Cloud API number's message templates in a real browser (Debian's chromium, whole stack), with
 * the Graph API played by the Cloud API simulator (`stack.cloud`, the sandbox's number): the
 * device page of a cloud device has a Templates tab and none of a linked device's (groups, labels,
 * statuses, channels); the tab lists the number's templates with their status, language, category,
 * parameters and text — placeholders marked, header, footer and buttons — filtered by name and
 * status, and read again from Meta on demand (no sooner than the API's floor). No secret is ever
 * in the page. Forgetting the number on the Settings tab gives the device its linked tabs back.
 * Axe and the overflow check at 1366 and 390 px, with their screenshots (the artifacts directory).
 *
 * The tests run on the mocha worker's shared stack and chromium (useDashboardStack): the suite's
 * device is made the sandbox's number and forgotten again before the suite ends.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { SANDBOX_NUMBER, SANDBOX_VERIFY_TOKEN } from '@mgw/cloud-sim';
import { keys } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { ADMIN_API_TOKEN, ADMIN_PASSWORD as PASSWORD, useDashboardStack } from '../../../test/browser.js';
import { sweepPage } from '../../../test/sweep.js';

/** The sandbox WABA's templates beside its samples (verification_code, order_update): one of each kind the tab shows. */
const TEMPLATES = [
  {
    name: 'spring_sale',
    language: 'en_US',
    category: 'MARKETING' as const,
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Spring sale, {{1}}!' },
      {
        type: 'BODY',
        text: 'Hi {{1}}, everything in the {{2}} collection is {{3}} off until Sunday.\nSee you soon.',
      },
      { type: 'FOOTER', text: 'Reply STOP to opt out' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'URL', text: 'Shop now', url: 'https://shop.example.com/sale/{{1}}' },
          { type: 'PHONE_NUMBER', text: 'Call the shop', phone_number: '+15550100001' },
          { type: 'QUICK_REPLY', text: 'Not interested' },
        ],
      },
    ],
  },
  {
    name: 'order_update',
    language: 'ar',
    category: 'UTILITY' as const,
    status: 'PAUSED' as const,
    components: [
      { type: 'HEADER', format: 'IMAGE' },
      { type: 'BODY', text: 'تم شحن طلبك {{1}}.' },
    ],
  },
  {
    name: 'winter_clearance',
    language: 'en_US',
    category: 'MARKETING' as const,
    status: 'REJECTED' as const,
    components: [{ type: 'BODY', text: 'Everything must go!' }],
  },
];

describe("Dashboard: a Cloud API number's message templates in a real browser (chromium, whole stack, Cloud API simulator)", function () {
  this.timeout(180_000);
  const dashboard = useDashboardStack(this);
  /** The sandbox's secrets: none may be in the page. */
  const SECRETS = [SANDBOX_NUMBER.accessToken, SANDBOX_NUMBER.appSecret, SANDBOX_VERIFY_TOKEN];

  const tabsOf = (page: Page) =>
    page.getByRole('navigation', { name: 'Device' }).getByRole('link').allTextContents();
  const card = (page: Page, name: string, language: string) =>
    page.getByTestId(`template-${name}-${language}`);
  const cards = (page: Page) => page.locator('[data-testid="cloud-templates"] li.template');
  const sweep = async (page: Page, name: string) => {
    const found = await sweepPage(page, name, `cloud-${name}`);
    expect(found.axe, `axe on ${name}`).to.deep.equal([]);
    expect(found.overflow, `overflow on ${name}`).to.deep.equal([]);
  };
  const noSecretInPage = async (page: Page, when: string) => {
    const html = await page.content();
    for (const secret of SECRETS) expect(html, `${when}: the page's markup`).not.to.include(secret);
  };

  it("When a cloud device's page opens, then it has a Templates tab and no linked device's tab, and the tab shows every template as it reads, filtered by name and status", async () => {
    const { stack, page } = dashboard();
    const { deviceId, redis } = stack;
    await stack.configureSandboxCloud(stack.token);
    try {
      for (const t of TEMPLATES) stack.cloud.addTemplate({ wabaId: SANDBOX_NUMBER.wabaId, ...t });
      await page.goto(`${stack.apiUrl}/dashboard/devices/${deviceId}`);
      await page.getByLabel('Admin password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('region', { name: 'WhatsApp Cloud API' }).getByTestId('cloud-config').waitFor();
      await waitFor(async () => (await tabsOf(page)).includes('Templates'), { what: 'the Templates tab' });
      expect(await tabsOf(page)).to.deep.equal(['Settings', 'Templates', 'Events']);

      await page.getByRole('navigation', { name: 'Device' }).getByRole('link', { name: 'Templates' }).click();
      await page.getByRole('heading', { name: `Templates of ${deviceId}`, level: 1 }).waitFor();
      await cards(page).first().waitFor();
      // By name, then language.
      expect(
        await cards(page).evaluateAll((els) => els.map((e) => e.getAttribute('data-testid'))),
      ).to.deep.equal([
        'template-order_update-ar',
        'template-order_update-en_US',
        'template-spring_sale-en_US',
        'template-verification_code-en_US',
        'template-winter_clearance-en_US',
      ]);
      await page
        .getByTestId('templates-fetched')
        .getByText(/^5 templates, read from Meta /)
        .waitFor();

      const sale = card(page, 'spring_sale', 'en_US');
      expect(await sale.getByTestId('template-spring_sale-en_US-status').textContent()).to.equal('Approved');
      await sale.getByText('Marketing').waitFor();
      await sale.getByText('header 1, body 3, button 0: 1').waitFor();
      expect(await sale.locator('.template-header').textContent()).to.equal('Spring sale, {{1}}!');
      expect(await sale.locator('.template-body .placeholder').allTextContents()).to.deep.equal([
        '{{1}}',
        '{{2}}',
        '{{3}}',
      ]);
      expect(await sale.locator('.template-footer').textContent()).to.equal('Reply STOP to opt out');
      expect(
        await sale.getByRole('list', { name: 'Buttons' }).getByRole('listitem').allTextContents(),
      ).to.deep.equal([
        'Shop nowLink: https://shop.example.com/sale/{{1}}',
        'Call the shopCall: +15550100001',
        'Not interestedQuick reply',
      ]);
      const paused = card(page, 'order_update', 'ar');
      expect(await paused.getByTestId('template-order_update-ar-status').textContent()).to.equal('Paused');
      await paused.getByText('Image header').waitFor();
      expect(await paused.locator('.template-body').getAttribute('dir')).to.equal('auto');
      const otp = card(page, 'verification_code', 'en_US');
      await otp.getByText('Code (copy code)').waitFor();
      await noSecretInPage(page, 'the list');
      await sweep(page, 'templates');

      // The filters: a part of the name, then a status; the count says how many of all.
      const name = page.getByLabel('Name', { exact: true });
      await name.fill('ORDER');
      await waitFor(async () => (await cards(page).count()) === 2, {
        what: 'the two order_update templates',
      });
      await page.getByLabel('Status').selectOption({ label: 'Paused' });
      await waitFor(async () => (await cards(page).count()) === 1, { what: 'the paused one' });
      await page
        .getByTestId('templates-fetched')
        .getByText(/^1 of 5 templates/)
        .waitFor();
      await name.fill('winter');
      await page.getByText('No template matches: clear the name or choose “Every status”.').waitFor();
      await page.getByLabel('Status').selectOption({ label: 'Rejected' });
      await card(page, 'winter_clearance', 'en_US').waitFor();
      expect(
        await card(page, 'winter_clearance', 'en_US')
          .getByTestId('template-winter_clearance-en_US-status')
          .textContent(),
      ).to.equal('Rejected');
      await sweep(page, 'templates-filtered');
      await name.fill('');
      await page.getByLabel('Status').selectOption({ label: 'Every status' });
      await waitFor(async () => (await cards(page).count()) === 5, { what: 'every template again' });

      // A template approved at Meta since: not within the API's floor, then once it has passed.
      stack.cloud.addTemplate({
        wabaId: SANDBOX_NUMBER.wabaId,
        name: 'back_in_stock',
        language: 'en_US',
        category: 'UTILITY',
        components: [{ type: 'BODY', text: '{{1}} is back in stock.' }],
      });
      const again = page.getByRole('button', { name: 'Read again from Meta' });
      await again.click();
      await page.getByText(/it is asked again at most every 30 seconds\.$/).waitFor();
      expect(await cards(page).count()).to.equal(5);
      const key = keys.cloudTemplates(deviceId);
      const kept = JSON.parse((await redis.get(key))!) as { fetchedAt: number };
      await redis.set(key, JSON.stringify({ ...kept, fetchedAt: kept.fetchedAt - 31_000 }), 'KEEPTTL');
      await again.click();
      await page.getByText('Read again from Meta just now.').waitFor();
      await card(page, 'back_in_stock', 'en_US').waitFor();
      await page
        .getByTestId('templates-fetched')
        .getByText(/^6 templates/)
        .waitFor();

      // A linked device's tab by its address: said, not shown.
      await page.goto(`${stack.apiUrl}/dashboard/devices/${deviceId}/groups`);
      await page
        .getByText(
          'Groups belong to a device linked by QR or pairing code: this device is a Cloud API number.',
        )
        .waitFor();
      expect(await page.getByTestId('groups').count()).to.equal(0);
      await noSecretInPage(page, 'a linked tab');

      // Forgotten on the Settings tab: the device is an unlinked one again, with the linked tabs.
      await page.getByRole('link', { name: 'Open its settings' }).click();
      const section = page.getByRole('region', { name: 'WhatsApp Cloud API' });
      await section.getByRole('button', { name: 'Forget' }).click();
      await page
        .getByRole('dialog', { name: `Forget the Cloud API number of ${deviceId}?` })
        .getByRole('button', { name: 'Yes, forget it' })
        .click();
      await section.getByTestId('cloud-none').waitFor();
      await waitFor(async () => (await tabsOf(page)).includes('Groups'), { what: 'the linked tabs' });
      expect(await tabsOf(page)).to.deep.equal([
        'Settings',
        'Groups',
        'Labels',
        'Statuses',
        'Channels',
        'Events',
      ]);
      await page.goto(`${stack.apiUrl}/dashboard/devices/${deviceId}/templates`);
      await page.getByText('Templates belong to a Cloud API number: this device is not one.').waitFor();
      await sweep(page, 'templates-linked');
    } finally {
      await stack.adminApi(ADMIN_API_TOKEN, 'DELETE', `/devices/${deviceId}/cloud`);
    }
  });
});
