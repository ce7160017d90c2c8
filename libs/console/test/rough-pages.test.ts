import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, VIEWPORTS, screenshots, useDashboardStack } from './browser.js';
import { overflowing } from './overflow.js';

/**
 * Issue 66, the console's rough pages: each `it` is one of them, at the width where it was rough
 * (1366 or 390 px, in Debian's Chromium), checked as a person would find it — the table that fits
 * its card and scrolls from the keyboard, the conversation that comes into view when a chat is
 * tapped on a phone, the y-axis that stays beside a scrolled chart, and so on.
 */
describe("Dashboard: the console's rough pages, fixed (issue 66; chromium at 1366 and 390 px, whole stack, simulator)", function () {
  this.timeout(300_000);

  /** Where an element is on the screen, and whether the page draws it there (nothing covers its middle). */
  const placeOf = (el: Locator) =>
    el.evaluate((e) => {
      const r = e.getBoundingClientRect();
      const hit = e.ownerDocument.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return {
        top: r.top,
        bottom: r.bottom,
        left: r.left,
        right: r.right,
        drawn: !!hit && (hit === e || e.contains(hit)),
      };
    });

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552750001';
  const [ana, ben, carl] = ['15552750011', '15552750012', '15552750013'];
  /** More contacts who wrote: the chat list is long, as a real inbox, on a phone. */
  const writers = Array.from({ length: 8 }, (_, i) => `155527500${20 + i}`);
  const LONG_LINK =
    'https://shop.example.com/catalogue/spring-summer-collection/new-arrivals-and-best-sellers-of-the-season';

  const h1 = (page: Page, name: string | RegExp) =>
    page.getByRole('heading', { name, exact: typeof name === 'string', level: 1 });
  /** Opens a page at a width, waits for its heading and what shows it has loaded. */
  const open = async (
    path: string,
    heading: string | RegExp,
    width: keyof typeof VIEWPORTS,
    ready?: (page: Page) => Locator,
  ) => {
    const { stack, page } = dashboard();
    await page.setViewportSize(VIEWPORTS[width]);
    await page.goto(`${stack.apiUrl}${path}`);
    await h1(page, heading).waitFor({ timeout: 15_000 });
    if (ready) await ready(page).first().waitFor({ timeout: 30_000 });
    return page;
  };
  /** The admin API as the signed-in page reads it. */
  const adminGet = <T>(page: Page, path: string) =>
    page.evaluate(async (p) => (await fetch(`/api/admin/v1${p}`)).json(), path) as Promise<T>;

  before(async () => {
    const { stack, page } = dashboard();
    for (const phone of [ana, ben, carl, ...writers]) await stack.simApi('POST', '/contacts', { phone });
    await stack.linkByQr(ACCOUNT, 'Rough Pages Shop');
    for (const from of [...writers, ben, ana])
      await stack.simApi('POST', `/contacts/${from}/send`, { to: ACCOUNT, text: `Hello, this is ${from}` });
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length >=
        writers.length + 2,
      { timeoutMs: 30_000, what: 'the chats' },
    );
    const list = await stack.api('POST', '/send', { to: [ana, ben], text: 'Hello from the shop!' });
    expect(list.status, JSON.stringify(list.body)).to.equal(202);
    const link = await stack.api('POST', '/send', { to: ana, text: `Our new catalogue: ${LONG_LINK}` });
    expect(link.status, JSON.stringify(link.body)).to.equal(202);
    const status = await stack.api('POST', '/statuses', { text: 'Open until 20:00', audience: [ana, ben] });
    expect(status.status, JSON.stringify(status.body)).to.equal(202);
    const blocked = await stack.api('POST', '/blocklist', { phone: carl });
    expect(blocked.status, JSON.stringify(blocked.body)).to.equal(200);
    const online = await stack.api('PUT', '/presence', { presence: 'available' });
    expect(online.status, JSON.stringify(online.body)).to.equal(200);

    await page.goto(`${stack.apiUrl}/dashboard/devices`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await h1(page, 'Devices').waitFor();
  });

  // Axe on this page (no scrollable region out of reach among its rules): the every-page sweep's, a
  // long link in its table too.
  it('When Messages lists a text with a long link at 1366 px, then the table fits its card (the ID column whole) inside a focusable, labelled scroller', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/messages?device=${stack.deviceId}`, 'Messages', 'laptop', (p) =>
      p.locator('table tbody tr', { hasText: 'Our new catalogue' }),
    );
    const table = page.locator('table', { has: page.getByRole('columnheader', { name: 'Kind' }) });
    const fit = await table.evaluate((t) => {
      const box = t.parentElement!;
      const card = t.closest('.card')!;
      const cardStyle = t.ownerDocument.defaultView!.getComputedStyle(card);
      const inner = card.getBoundingClientRect().right - parseFloat(cardStyle.paddingRight) - 1;
      const ids = [...t.querySelectorAll('td[data-label="ID"]')].map(
        (td) => td.getBoundingClientRect().right,
      );
      return {
        table: Math.round(t.getBoundingClientRect().width),
        box: box.clientWidth,
        idsInside: ids.every((right) => right <= inner + 1),
        role: box.getAttribute('role'),
        label: box.getAttribute('aria-label'),
        tabIndex: box.tabIndex,
      };
    });
    expect(fit.table, `the table (${fit.table} px) fits its box (${fit.box} px)`).to.be.at.most(fit.box);
    expect(fit.idsInside, 'every ID cell inside the card').to.equal(true);
    expect({ role: fit.role, label: fit.label, tabIndex: fit.tabIndex }).to.deep.equal({
      role: 'region',
      label: 'Recent messages',
      tabIndex: 0,
    });
    await screenshots(page, 'rough-messages');
    expect(await overflowing(page), 'nothing out of its box at 1366 and 390 px').to.deep.equal([]);
  });

  it('When a chat is tapped on a phone (390 px), then its conversation scrolls into view below the top bar and the focus moves to it', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/chats?device=${stack.deviceId}`, 'Chats', 'phone', (p) =>
      p.getByTestId(`chat-${ana}`),
    );
    const pane = page.getByRole('region', { name: /Messages of/ });
    expect(await pane.count(), 'no chat open yet').to.equal(0);
    await page.getByTestId(`chat-${ana}`).click();
    await pane.getByText(`Hello, this is ${ana}`).waitFor({ timeout: 15_000 });
    const bar = await page.locator('.topbar').evaluate((e) => e.getBoundingClientRect().bottom);
    // The conversation starts just under the sticky top bar (not ~900 px further down), its name drawn.
    let place = await placeOf(pane);
    await waitFor(
      async () => {
        place = await placeOf(pane);
        return place.top >= bar - 1 && place.top <= bar + 24;
      },
      { timeoutMs: 5_000, what: 'the conversation under the top bar' },
    ).catch(() => undefined);
    expect(place.top, `the conversation's top, under the top bar at ${bar} px`).to.be.within(
      bar - 1,
      bar + 24,
    );
    expect((await placeOf(pane.getByRole('heading', { level: 2 }).first())).drawn, 'its name drawn').to.equal(
      true,
    );
    expect(
      await pane.evaluate((e) => e.contains(e.ownerDocument.activeElement)),
      'the focus is in the conversation',
    ).to.equal(true);
    await page.screenshot({ path: `${process.env.TMPDIR ?? '/tmp'}/rough-chats-phone-viewport.png` });
  });

  it('When the Devices page lists a device, then its row names the way to the device\'s pages "Manage", not "Settings" (the top bar\'s Settings is the API tokens)', async () => {
    const { stack } = dashboard();
    const page = await open('/dashboard/devices', 'Devices', 'laptop', (p) =>
      p.getByTestId(`device-${stack.deviceId}`),
    );
    const row = page.getByTestId(`device-${stack.deviceId}`);
    expect(await row.getByRole('link', { name: 'Settings', exact: true }).count()).to.equal(0);
    const manage = row.getByRole('link', { name: 'Manage', exact: true });
    expect(await manage.count()).to.equal(1);
    expect(await manage.getAttribute('href')).to.equal(`/dashboard/devices/${stack.deviceId}`);
    await manage.click();
    await h1(page, `Settings of ${stack.deviceId}`).waitFor();
  });

  it("When the device's blocklist lists a number, then its table is styled as the others, its third header is named Actions, and on a phone Unblock stays inside the card", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}`,
      `Settings of ${stack.deviceId}`,
      'laptop',
      (p) => p.getByTestId('blocklist').getByText(carl),
    );
    const blocklist = page.getByRole('region', { name: 'Blocklist' });
    const table = blocklist.getByTestId('blocklist');
    expect(await table.getAttribute('class')).to.match(/\btable\b/);
    expect(await table.getByRole('columnheader', { name: 'Actions' }).count()).to.equal(1);
    // Each header's text starts where its column's text does.
    const edges = await table.evaluate((t) =>
      [...t.querySelectorAll('thead th')].slice(0, 2).map((th, i) => {
        const [head, cell] = [th, t.querySelectorAll('tbody tr:first-child td')[i]!].map((el) => {
          const range = t.ownerDocument.createRange();
          range.selectNodeContents(el);
          return range.getBoundingClientRect().left;
        });
        return Math.abs(head! - cell!);
      }),
    );
    for (const gap of edges) expect(gap, 'header and cell text aligned').to.be.below(2);
    await page.setViewportSize(VIEWPORTS.phone);
    await blocklist.scrollIntoViewIfNeeded();
    const inside = await blocklist.evaluate((card) => {
      const button = [...card.querySelectorAll('button')].find((b) => b.textContent === 'Unblock')!;
      const style = card.ownerDocument.defaultView!.getComputedStyle(card);
      const inner = card.getBoundingClientRect().right - parseFloat(style.paddingRight);
      return { button: button.getBoundingClientRect().right, inner };
    });
    expect(inside.button, 'Unblock within the card’s padding').to.be.at.most(inside.inner + 1);
    await page.setViewportSize(VIEWPORTS.laptop);
  });

  it("When the API showed the account online, then the device's Presence section says so, and follows a change made there", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}`,
      `Settings of ${stack.deviceId}`,
      'laptop',
      (p) => p.getByRole('region', { name: 'Presence' }),
    );
    const section = page.getByRole('region', { name: 'Presence' });
    const current = section.getByTestId('presence-current');
    await current.getByText('Online', { exact: true }).waitFor({ timeout: 15_000 });
    await section.getByRole('button', { name: 'Show as offline' }).click();
    await section.getByText('The account shows as offline.').waitFor();
    await current.getByText('Offline', { exact: true }).waitFor({ timeout: 15_000 });
    const read = await adminGet<{ data: { presence: string } }>(page, `/devices/${stack.deviceId}/presence`);
    expect(read.data.presence).to.equal('unavailable');
    await section.getByRole('button', { name: 'Show as online' }).click();
    await current.getByText('Online', { exact: true }).waitFor({ timeout: 15_000 });
    await section.scrollIntoViewIfNeeded();
    await screenshots(page, 'rough-presence');
    expect(await overflowing(page), 'nothing out of its box at 1366 and 390 px').to.deep.equal([]);
  });

  it('When the Batches chart scrolls sideways on a phone, then its y-axis stays in view beside it, with a title for its scale', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/batches?device=${stack.deviceId}`, 'Batches', 'phone', (p) =>
      p.locator('.chart-scroll [data-testid="activity-hour"]'),
    );
    const axis = page.getByTestId('activity-y-axis');
    expect(await axis.count(), 'a y-axis apart from the scrolled bars').to.equal(1);
    expect(
      await axis.getByText('Messages', { exact: true }).count(),
      'the scale says what it counts',
    ).to.equal(1);
    const ticks = axis.locator('[data-testid="y-tick"]');
    expect(await ticks.count()).to.be.greaterThan(1);
    await axis.scrollIntoViewIfNeeded();
    for (let i = 0; i < (await ticks.count()); i++) {
      const place = await placeOf(ticks.nth(i));
      expect(place.left, 'tick label inside the window').to.be.at.least(0);
      expect(place.drawn, `tick ${i} drawn, not scrolled away`).to.equal(true);
    }
    // Scrolled to its oldest hours, the axis is still there.
    await page.locator('.chart-scroll').evaluate((e) => e.scrollBy({ left: -5000 }));
    expect((await placeOf(ticks.first())).drawn).to.equal(true);
    await screenshots(page, 'rough-batches');
    expect(await overflowing(page), 'nothing out of its box at 1366 and 390 px').to.deep.equal([]);
  });

  it('When Settings → API lists tokens on a phone, then each shows its whole id as text (no tooltip needed), selectable', async () => {
    const page = await open('/dashboard/settings/api', 'Settings', 'phone', (p) =>
      p.locator('.tokens-table tbody tr'),
    );
    const row = page.locator('.tokens-table tbody tr').first();
    const id = (await row.getAttribute('data-testid'))!.replace(/^token-/, '');
    const cell = row.locator('td[data-label="Id"]');
    expect(await cell.innerText()).to.include(id);
    const shown = await cell.evaluate((td) => {
      const range = td.ownerDocument.createRange();
      range.selectNodeContents(td);
      const r = range.getBoundingClientRect();
      return {
        inside: r.right <= td.ownerDocument.documentElement.clientWidth + 1 && r.left >= 0,
        select: td.ownerDocument.defaultView!.getComputedStyle(td).userSelect,
        ellipsis: [td, ...td.querySelectorAll('*')].some(
          (e) =>
            td.ownerDocument.defaultView!.getComputedStyle(e).textOverflow === 'ellipsis' &&
            e.scrollWidth > e.clientWidth,
        ),
      };
    });
    expect(shown.inside, 'the whole id inside the window').to.equal(true);
    expect(shown.ellipsis, 'not cut by an ellipsis').to.equal(false);
    expect(shown.select, 'selectable').to.not.equal('none');
    await screenshots(page, 'rough-tokens');
    expect(await overflowing(page), 'nothing out of its box at 1366 and 390 px').to.deep.equal([]);
  });

  it('When Messages lists a batch and a status update, then the Batches card says which is which, with its text and when it was made', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/messages?device=${stack.deviceId}`, 'Messages', 'laptop', (p) =>
      p.getByRole('region', { name: 'Batches' }),
    );
    const batches = page.getByRole('region', { name: 'Batches' });
    const status = batches.getByRole('listitem').filter({ hasText: 'Status update' });
    const batch = batches.getByRole('listitem').filter({ hasText: 'Message batch' });
    expect(await status.count(), 'the status update named so').to.equal(1);
    expect(await batch.count(), 'the batch named so').to.equal(1);
    expect(await status.innerText()).to.include('Open until 20:00');
    expect(await batch.innerText())
      .to.include('Hello from the shop!')
      .and.include('2 recipients');
    for (const item of [status, batch]) {
      const made = item.locator('time');
      expect(await made.count(), 'when it was made').to.equal(1);
      expect(Date.now() - Date.parse((await made.getAttribute('datetime'))!)).to.be.within(0, 3_600_000);
    }
    await batches.scrollIntoViewIfNeeded();
    await screenshots(page, 'rough-batches-card');
    expect(await overflowing(page), 'nothing out of its box at 1366 and 390 px').to.deep.equal([]);
  });

  it('When following a channel fails on a phone, then the error shows next to the Follow form, not in the list above', async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}/channels`,
      `Channels of ${stack.deviceId}`,
      'phone',
    );
    const follow = page.getByRole('region', { name: 'Follow a channel' });
    await follow
      .getByLabel('Channel id or invite link')
      .fill('https://whatsapp.com/channel/NoSuchChannelAtAll');
    await follow.getByRole('button', { name: 'Follow' }).click();
    await page.getByText(/Could not follow the channel/).waitFor({ timeout: 30_000 });
    expect(await follow.getByRole('alert').count(), 'the error in the Follow card').to.equal(1);
    expect(await page.getByTestId('channel-list').getByRole('alert').count(), 'none in the list').to.equal(0);
    const [button, error] = await Promise.all([
      placeOf(follow.getByRole('button', { name: 'Follow' })),
      placeOf(follow.getByRole('alert')),
    ]);
    expect(error.top - button.bottom, 'the error just under the button').to.be.within(0, 120);
    await screenshots(page, 'rough-channels');
    // A field scrolls the text typed in it, by nature: emptied, the rest of the page is measured.
    await follow.getByLabel('Channel id or invite link').fill('');
    expect(await overflowing(page), 'nothing out of its box at 1366 and 390 px').to.deep.equal([]);
  });

  it('When the sending policy\'s "Typing…" is chosen, then it is a choice of default, on and off, saved as null, true and false', async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}`,
      `Settings of ${stack.deviceId}`,
      'laptop',
      (p) => p.getByRole('region', { name: 'Sending policy' }).getByTestId('policy-effective'),
    );
    const policy = page.getByRole('region', { name: 'Sending policy' });
    expect(await policy.getByRole('textbox', { name: /Typing/ }).count(), 'no free text').to.equal(0);
    const typing = policy.getByRole('combobox', { name: /Typing/ });
    expect(await typing.count()).to.equal(1);
    const overrides = async () =>
      (await adminGet<{ overrides: { typing?: boolean } }>(page, `/devices/${stack.deviceId}/policy`))
        .overrides;
    for (const [choice, saved] of [
      ['Off', false],
      ['On', true],
      ['Default (on)', undefined],
    ] as const) {
      await typing.selectOption({ label: choice });
      await policy.getByRole('button', { name: 'Save policy' }).click();
      await policy.getByText('Policy saved: it applies to the next message.').waitFor();
      expect((await overrides()).typing, choice).to.equal(saved);
      expect(await typing.inputValue()).to.equal(saved === undefined ? '' : String(saved));
    }
  });

  it("When a device's tabs are shown on a phone, then they stay on one line that scrolls sideways, the open tab in view, each reachable by Tab", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}/events`,
      `Events of ${stack.deviceId}`,
      'phone',
    );
    const nav = page.getByRole('navigation', { name: 'Device' });
    const layout = await nav.evaluate((n) => ({
      tops: [...new Set([...n.querySelectorAll('a')].map((a) => Math.round(a.getBoundingClientRect().top)))],
      overflowX: n.ownerDocument.defaultView!.getComputedStyle(n).overflowX,
    }));
    expect(layout.tops, 'one line').to.have.length(1);
    expect(['auto', 'scroll']).to.include(layout.overflowX);
    /** Whether the link shows whole inside the tab bar (else where each is, and the bar's scroll). */
    const inNav = (link: Locator) =>
      link.evaluate((a) => {
        const bar = a.parentElement!;
        const [n, r] = [bar.getBoundingClientRect(), a.getBoundingClientRect()];
        return r.left >= n.left - 1 && r.right <= n.right + 1
          ? 'whole'
          : `cut: ${r.left}-${r.right} in ${n.left}-${n.right}, scrolled ${bar.scrollLeft}`;
      });
    expect(await inNav(nav.getByRole('link', { name: 'Events' })), 'the open tab in view').to.equal('whole');
    await nav.getByRole('link', { name: 'Settings' }).focus();
    for (const name of ['Groups', 'Labels', 'Statuses', 'Channels', 'Events']) {
      await page.keyboard.press('Tab');
      const link = nav.getByRole('link', { name });
      expect(await link.evaluate((a) => a === a.ownerDocument.activeElement), `${name} focused`).to.equal(
        true,
      );
      expect(await inNav(link), `${name} scrolled into view`).to.equal('whole');
    }
    await screenshots(page, 'rough-device-tabs');
    expect(await overflowing(page), 'nothing out of its box at 1366 and 390 px').to.deep.equal([]);
  });
});
