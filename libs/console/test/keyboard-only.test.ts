import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from './browser.js';

describe('Dashboard by keyboard only: sign in, link a device, reply in the inbox, revoke a token — no mouse (chromium, whole stack, simulator)', function () {
  this.timeout(240_000);

  /**
   * What has the keyboard's focus: `<tag>:<accessible name>` (its aria-label, else its label's text,
   * else its own text), `body` when nothing has; and whether a ring shows where it is (an outline
   * or a box shadow). A string: the tests' TypeScript has no DOM globals.
   */
  const ACTIVE = `(() => {
    const e = document.activeElement;
    if (!e || e === document.body) return { name: 'body', ring: false };
    const label = e.getAttribute('aria-label') || (e.labels && e.labels[0] ? e.labels[0].textContent : '') || e.textContent || '';
    const s = getComputedStyle(e);
    const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
    return { name: e.tagName.toLowerCase() + ':' + label.replace(/\\s+/g, ' ').trim(), ring };
  })()`;

  interface Active {
    name: string;
    ring: boolean;
  }
  const active = (page: Page) => page.evaluate<Active>(ACTIVE);

  /**
   * Presses Tab (Shift+Tab with `back`) until the focused element's name matches `wanted`, checking
   * that a focus ring shows on every stop on the way. Fails, listing the stops, when it is not
   * reached in `max` presses.
   */
  async function tabTo(
    page: Page,
    wanted: RegExp,
    opts: { back?: boolean; max?: number } = {},
  ): Promise<void> {
    const stops: string[] = [];
    for (let i = 0; i < (opts.max ?? 80); i++) {
      await page.keyboard.press(opts.back ? 'Shift+Tab' : 'Tab');
      const now = await active(page);
      stops.push(now.name);
      if (now.name !== 'body') expect(now.ring, `a focus ring on ${now.name}`).to.equal(true);
      if (wanted.test(now.name)) return;
    }
    throw new Error(
      `${wanted} not reached by ${opts.back ? 'Shift+Tab' : 'Tab'}; stops: ${stops.join(' | ')}`,
    );
  }

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552760001';
  const ana = '15552760011';
  const DEVICE = 'kbd-shop';

  it('When the operator uses only the keyboard, then each step is reachable with a visible focus, and each lands: the device links, the contact gets the reply, the revoked token answers 401', async () => {
    const { stack, page } = dashboard();
    const h1 = (name: string) => page.getByRole('heading', { name, exact: true, level: 1 });

    // Sign in: the password field, typed, Enter.
    await page.goto(`${stack.apiUrl}/dashboard`);
    await page.getByLabel('Admin password').waitFor();
    await tabTo(page, /^input:Admin password$/);
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await h1('Devices').waitFor();

    // Link a device: its id typed over the default one, then "Link with QR code".
    await tabTo(page, /^input:Device ID$/);
    await page.keyboard.press('Control+A');
    await page.keyboard.type(DEVICE);
    await tabTo(page, /^button:Link with QR code$/);
    await page.keyboard.press('Enter');
    const qr = page.getByTestId('qr-code');
    await qr.waitFor({ timeout: 15_000 });
    // The phone is not the keyboard: the simulated phone scans the QR, as the sandbox command does.
    await stack.simApi('POST', '/phone/link', {
      qr: await qr.getAttribute('data-qr'),
      phone: ACCOUNT,
      name: 'Keyboard Shop',
    });
    await page.getByTestId(`device-${DEVICE}`).getByText('Connected').waitFor({ timeout: 30_000 });
    expect((await active(page)).name, 'the focus stays on the button').to.equal('button:Link with QR code');

    // A contact writes first.
    await stack.simApi('POST', `/contacts/${ana}/send`, { to: ACCOUNT, text: 'Do you deliver on Sundays?' });

    // The inbox: the menu's Chats link (back up the page), the device chosen, the chat opened with j and Enter.
    await tabTo(page, /^a:Chats$/, { back: true });
    await page.keyboard.press('Enter');
    await h1('Chats').waitFor();
    const select = page.getByLabel('Device', { exact: true });
    await select.locator(`option[value="${DEVICE}"]`).waitFor({ state: 'attached' });
    if ((await select.inputValue()) !== DEVICE) {
      await tabTo(page, /^select:Device$/);
      for (let i = 0; i < 10 && (await select.inputValue()) !== DEVICE; i++)
        await page.keyboard.press('ArrowDown');
      expect(await select.inputValue()).to.equal(DEVICE);
      // Back to the page, out of the field: j and r are the page's keys, not the select's.
      await page.keyboard.press('Tab');
    }
    const row = page.locator('.chat-row').filter({ hasText: `+${ana}` });
    await row.waitFor({ timeout: 30_000 });
    await page.keyboard.press('j');
    await waitFor(async () => (await active(page)).name.includes(`+${ana}`), {
      timeoutMs: 5_000,
      what: 'j focuses the chat',
    });
    expect((await active(page)).ring, 'a focus ring on the chat').to.equal(true);
    await page.keyboard.press('Enter');
    await page
      .getByRole('region', { name: /Messages of/ })
      .getByText('Do you deliver on Sundays?')
      .waitFor({ timeout: 15_000 });
    await page.keyboard.press('r');
    expect((await active(page)).name).to.equal('textarea:Reply');
    await page.keyboard.type('Yes, from 10 to 4.');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await stack.inbox(ana)).some((m) => m.text === 'Yes, from 10 to 4.'), {
      timeoutMs: 30_000,
      what: 'the contact gets the reply',
    });
    await screenshots(page, 'keyboard-chats');

    // Settings → API: a token made and revoked, each through the keyboard.
    await tabTo(page, /^a:Settings$/, { back: true });
    await page.keyboard.press('Enter');
    await h1('Settings').waitFor();
    await tabTo(page, /^input:Name$/);
    await page.keyboard.type('keyboard token');
    await tabTo(page, /^input:Device \(optional\)$/);
    await page.keyboard.type(DEVICE);
    await page.keyboard.press('Enter');
    const value = (await page.getByTestId('new-token-value').textContent({ timeout: 15_000 })) ?? '';
    expect(value).to.match(/^mgw_/);
    const status = async () =>
      (
        await fetch(`${stack.apiUrl}/api/messenger/v1/status`, {
          headers: { authorization: `Bearer ${value}` },
        })
      ).status;
    expect(await status()).to.equal(200);

    await tabTo(page, /^button:Revoke token keyboard token$/);
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Revoke “keyboard token”?' });
    await dialog.waitFor();
    // The dialog holds the focus: its buttons, by Tab.
    await tabTo(page, /^button:Yes, revoke$/, { max: 5 });
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('Token “keyboard token” revoked').waitFor();
    expect(await status()).to.equal(401);
    // The focus is not lost with the dialog and the revoked row: it is on what the revoke said.
    await waitFor(
      async () =>
        (await page
          .getByTestId(/^token-/)
          .filter({ hasText: 'keyboard token' })
          .count()) === 0,
      {
        timeoutMs: 20_000,
        what: 'the revoked token gone from the list',
      },
    );
    const after = await active(page);
    expect(after.name, 'the focus after the dialog').to.match(/revoked/);
    await screenshots(page, 'keyboard-revoked');
  });
});
