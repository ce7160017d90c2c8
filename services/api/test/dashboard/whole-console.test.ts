/**
 * The whole console in a real browser (Debian's chromium, whole stack, simulator), at 1366 and
 * 390 px: every page with data on it (axe clean, no text out of its box, a screenshot of each);
 * the rough pages of issue 66, each at the width where it was rough; axe on every page and dialog;
 * and the keyboard alone signing in, linking a device, replying in the inbox and revoking a token.
 *
 * Each `describe` is one suite as it was when it had a file of its own: its own helpers and its own
 * hooks, run one after the other. They share the mocha worker's one stack and one chromium
 * (useDashboardStack: the stack started by the worker's first dashboard suite and stopped when the
 * worker exits, reset before each suite to what a fresh one shows): each suite has a device, a
 * token, phone numbers and a browser context of its own.
 */
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { markRestricted } from '@mgw/store';
import { WebhookReceiver, waitFor } from '@mgw/testing';
import { audit } from './axe.js';
import { ADMIN_PASSWORD as PASSWORD, VIEWPORTS, screenshots, useDashboardStack } from './browser.js';
import { overflowing } from './overflow.js';
import { sweepPage } from './sweep.js';

/**
 * Every page of the dashboard with something on it, at 1366 and 390 px: axe finds no serious or
 * critical violation, no text sticks out of its box, and a screenshot of each is saved
 * (`every-<page>-laptop.png`, `-phone.png`) for people to look at. Every tab of a device is one of
 * them: the last test checks that the device's tab bar names no tab left unswept.
 */
describe('Dashboard: every page with data on it — axe clean, no text out of its box, at 1366 and 390 px (chromium, whole stack, simulator)', function () {
  this.timeout(300_000);

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552740001';
  const [ana, ben, carl] = ['15552740011', '15552740012', '15552740013'];
  let receiver: WebhookReceiver | undefined;
  let groupId = '';
  let channelId = '';
  after(async () => receiver?.close());

  const h1 = (page: Page, name: string | RegExp) =>
    page.getByRole('heading', { name, exact: typeof name === 'string', level: 1 });
  /** Opens a page by its URL, waits for its heading and what shows it has loaded. */
  const open = async (path: string, heading: string | RegExp, ready?: (page: Page) => Locator) => {
    const { stack, page } = dashboard();
    await page.goto(`${stack.apiUrl}${path}`);
    await h1(page, heading).waitFor({ timeout: 15_000 });
    if (ready) await ready(page).first().waitFor({ timeout: 30_000 });
    return page;
  };
  /** The paths swept, to check every tab of a device was. */
  const swept = new Set<string>();
  /** The three checks of a page as it is, in one pass over the two widths: screenshots, axe, overflow. */
  const sweep = async (page: Page, name: string) => {
    swept.add(new URL(page.url()).pathname);
    const found = await sweepPage(page, name, `every-${name}`);
    expect(found.axe, `axe on ${name}`).to.deep.equal([]);
    expect(found.overflow, `overflow on ${name}`).to.deep.equal([]);
  };

  before(async () => {
    const { stack, page } = dashboard();
    // A webhook that refuses everything: the Events tab shows its failure.
    receiver = await WebhookReceiver.startFor(stack);
    receiver.respond = () => 500;
    await stack.linkByQr(ACCOUNT, 'Every Page Shop');
    for (const [phone, name] of [
      [ana, 'Ana'],
      [ben, 'Ben'],
      [carl, 'Carl'],
    ])
      await stack.simApi('POST', '/contacts', { phone, name });
    // A contact writes first, the device sends a list.
    await stack.simApi('POST', `/contacts/${ana}/send`, {
      to: ACCOUNT,
      text: 'Is the blue jacket in stock?',
    });
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length >=
        1,
      { timeoutMs: 20_000, what: 'the chat' },
    );
    expect(
      (await stack.api('POST', '/send', { to: [ana, ben], text: 'Hello from the shop!' })).status,
    ).to.equal(202);
    // A text with a long link: the widest content the Messages table holds.
    expect(
      (
        await stack.api('POST', '/send', {
          to: ana,
          text: 'Our catalogue: https://shop.example.com/catalogue/spring-summer-collection/new-arrivals-and-best-sellers',
        })
      ).status,
    ).to.equal(202);
    // A number blocked, the account shown online: the Settings tab's blocklist and presence.
    expect((await stack.api('POST', '/blocklist', { phone: carl })).status).to.equal(200);
    expect((await stack.api('PUT', '/presence', { presence: 'available' })).status).to.equal(200);
    // A group, a status, a channel.
    const group = await stack.api<{ data: { group: { id: string } } }>('POST', '/groups', {
      subject: 'Every page team',
      participants: [ana, ben],
    });
    expect(group.status, JSON.stringify(group.body)).to.equal(200);
    groupId = group.body.data.group.id;
    const status = await stack.api('POST', '/statuses', { text: 'Open until 20:00', audience: [ana, ben] });
    expect(status.status, JSON.stringify(status.body)).to.equal(202);
    const channel = await stack.api<{ data: { channel: { id: string } } }>('POST', '/channels', {
      name: 'Every Page News',
      description: 'Offers every Monday',
    });
    expect(channel.status, JSON.stringify(channel.body)).to.equal(200);
    channelId = channel.body.data.channel.id;
    // A label, once the phone shared its app-state key (the device has it moments later).
    await stack.simApi('POST', `/accounts/${ACCOUNT}/app-state/key-share`);
    await waitFor(
      async () => (await stack.api('POST', '/labels', { name: 'VIP customers', color: 5 })).status === 200,
      { timeoutMs: 40_000, what: 'a label made once the app-state key is there' },
    );
    // WhatsApp pushed back: the row shows the pause with its end and reason.
    await markRestricted(stack.redis, stack.deviceId, 'reachout_timelock', Date.now() + 3_600_000);

    await page.goto(`${stack.apiUrl}/dashboard/devices`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await h1(page, 'Devices').waitFor();
  });

  it('When a device is linked, paused and busy, then the Devices page passes', async () => {
    const { stack } = dashboard();
    const page = await open('/dashboard/devices', 'Devices', (p) =>
      p.getByTestId(`device-sending-${stack.deviceId}`).getByText(/Paused until/),
    );
    await sweep(page, 'devices');
  });

  it('Then the Pools page passes', async () => {
    const { stack } = dashboard();
    const page = await open('/dashboard/pools', 'Pools');
    const create = page.getByRole('form', { name: 'New pool' });
    await create.getByLabel('Pool id').fill('every-pool');
    await create.getByLabel('Name').fill('Every shop');
    await create.getByRole('checkbox', { name: new RegExp(stack.deviceId) }).check();
    await create.getByRole('button', { name: 'Create pool' }).click();
    await page.getByText('Pool “Every shop” created.').waitFor();
    await sweep(page, 'pools');
  });

  it('Then the Messages page passes', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/messages?device=${stack.deviceId}`, 'Messages', (p) =>
      p.locator('table tbody tr'),
    );
    await sweep(page, 'messages');
  });

  it('Then the Chats page, a chat open, passes', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/chats?device=${stack.deviceId}&chat=${ana}`, 'Chats', (p) =>
      p.getByRole('region', { name: /Messages of/ }).getByText('blue jacket', { exact: false }),
    );
    await sweep(page, 'chats');
  });

  it('Then the Batches page passes', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/batches?device=${stack.deviceId}`, 'Batches', (p) =>
      p.locator('.chart-scroll'),
    );
    await sweep(page, 'batches');
  });

  it('Then Settings → API passes', async () => {
    const page = await open('/dashboard/settings/api', 'Settings', (p) =>
      p.locator('.tokens-table tbody tr'),
    );
    await sweep(page, 'settings-api');
  });

  it("Then the device's Settings tab passes", async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/devices/${stack.deviceId}`, `Settings of ${stack.deviceId}`, (p) =>
      p.getByRole('region', { name: 'Profile' }).getByTestId('profile-current'),
    );
    await page.getByTestId('blocklist').getByText(`+${carl}`).waitFor();
    await page.getByTestId('presence-current').getByText('Online').waitFor();
    await sweep(page, 'device-settings');
  });

  it("Then the device's Groups tab, the list and a group open, passes", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}/groups`,
      `Groups of ${stack.deviceId}`,
      (p) => p.getByTestId(`group-${groupId}`),
    );
    await sweep(page, 'groups');
    const detail = await open(
      `/dashboard/devices/${stack.deviceId}/groups?group=${encodeURIComponent(groupId)}`,
      `Groups of ${stack.deviceId}`,
      (p) => p.getByTestId(`member-${ana}`),
    );
    await sweep(detail, 'group-detail');
  });

  it("Then the device's Labels tab passes", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}/labels`,
      `Labels of ${stack.deviceId}`,
      (p) => p.getByTestId(/^label-/).filter({ hasText: 'VIP customers' }),
    );
    await sweep(page, 'labels');
  });

  it("Then the device's Statuses tab passes", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}/statuses`,
      `Statuses of ${stack.deviceId}`,
      (p) => p.getByTestId(/^status-row-/).filter({ hasText: 'Open until 20:00' }),
    );
    await sweep(page, 'statuses');
  });

  it("Then the device's Channels tab, a channel open, passes", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}/channels`,
      `Channels of ${stack.deviceId}`,
      (p) => p.getByTestId(`channel-${channelId}`),
    );
    await page.getByRole('button', { name: 'Open Every Page News' }).click();
    await page.getByTestId('channel-panel').getByRole('heading', { name: 'Post to the channel' }).waitFor({
      timeout: 30_000,
    });
    await sweep(page, 'channels');
  });

  it("Then the device's Events tab, its webhook failing, passes", async () => {
    const { stack } = dashboard();
    const page = await open(
      `/dashboard/devices/${stack.deviceId}/events`,
      `Events of ${stack.deviceId}`,
      (p) => p.getByTestId('webhook-last-failure').getByText('HTTP 500'),
    );
    await page.getByTestId('event-row').first().waitFor();
    await sweep(page, 'events');
  });

  it("Then the device's tab bar names no tab the tests above left out: each was swept at both widths", async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/devices/${stack.deviceId}`, `Settings of ${stack.deviceId}`);
    const tabs = await page
      .getByRole('navigation', { name: 'Device' })
      .getByRole('link')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    expect(tabs).to.have.length.greaterThan(5);
    expect(tabs.filter((t) => !swept.has(t))).to.deep.equal([]);
  });
});

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

/**
 * Axe on what the every-page suite above does not sweep: the sign-in page, each dialog and each
 * page in a state of its own (a link panel, a new token, a pool in edit, the chart's numbers…).
 * Each page state is audited once: the pages as the sweep shows them (Devices, Pools, Messages, a
 * chat open, Settings → API, a device's settings) are left to it.
 */
describe('Dashboard accessibility: axe (WCAG 2.1 A and AA) on every page and dialog at 1366 and 390 px (chromium, whole stack, simulator)', function () {
  this.timeout(240_000);

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552700001';
  const [ana, ben] = ['15552700011', '15552700012'];
  const poolId = `a11y-${Math.random().toString(36).slice(2, 6)}`;

  const h1 = (page: Page, name: string) => page.getByRole('heading', { name, exact: true, level: 1 });
  const open = async (path: string, heading: string, ready?: (page: Page) => Locator) => {
    const { stack, page } = dashboard();
    await page.goto(`${stack.apiUrl}${path}`);
    await h1(page, heading).waitFor();
    if (ready) await ready(page).first().waitFor({ timeout: 15_000 });
    return page;
  };

  it('When no one is signed in, then the sign-in page has no serious or critical violation', async () => {
    const { stack, page } = dashboard();
    await page.goto(`${stack.apiUrl}/dashboard`);
    await page.getByLabel('Admin password').waitFor();
    expect(await audit(page, 'sign-in')).to.deep.equal([]);
    // A wrong password: the page with its error.
    await page.getByLabel('Admin password').fill('not it');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That password is not right.').waitFor();
    expect(await audit(page, 'sign-in (wrong password)')).to.deep.equal([]);
  });

  it('When a device is linked and chatted, then the Devices page’s link panel and its disconnect dialog have none', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'Axe Shop');
    const write = (from: string, text: string) =>
      stack.simApi('POST', `/contacts/${from}/send`, { to: ACCOUNT, text });
    await write(ana, 'Is the blue jacket still in stock?');
    await write(ben, 'Can I change my delivery address?');
    await waitFor(
      async () =>
        ((await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats ?? []).length ===
        2,
      { timeoutMs: 20_000, what: 'two chats' },
    );
    const sent = await stack.api<{ messageId: string }>('POST', '/send', { to: [ana, ben], text: 'Hello!' });
    expect(sent.status).to.equal(202);

    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await h1(page, 'Devices').waitFor();
    await page.getByTestId(`device-${stack.deviceId}`).getByText('Connected').waitFor();
    // The page itself, a device linked: the every-page sweep's.
    const problems: string[] = [];

    await page.getByLabel('Device ID').fill('a11y-new-device');
    await page.getByRole('button', { name: 'Link with QR code' }).click();
    await page.getByTestId('qr-code').waitFor();
    // Its row too, in the list (its "Connecting" badge).
    await page.getByTestId('device-a11y-new-device').waitFor();
    problems.push(...(await audit(page, 'devices: link panel')));
    await screenshots(page, 'a11y-devices-link-panel');
    await page.reload();

    await page
      .getByTestId(`device-${stack.deviceId}`)
      .getByRole('button', { name: /Disconnect/ })
      .click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'devices: disconnect dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });

  it("Then a device's settings page, with a webhook and an opt-out, and its remove-webhook dialog have none", async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/devices/${stack.deviceId}`, `Settings of ${stack.deviceId}`, (p) =>
      p.getByRole('region', { name: 'Profile' }).getByTestId('profile-current'),
    );
    await page.getByTestId('blocklist-empty').waitFor();
    // The page as it opens: the every-page sweep's. With a webhook (its new secret shown) and a
    // suppressed number, then the webhook's remove dialog.
    await page.getByLabel('Webhook URL').fill('http://127.0.0.1:9/hooks/whatsapp');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor();
    const optOuts = page.getByTestId('opt-outs');
    await optOuts.getByLabel('Number to suppress').fill(ben);
    await optOuts.getByRole('button', { name: 'Suppress' }).click();
    await optOuts.getByText(ben).first().waitFor();
    const problems = await audit(page, 'device settings: webhook, opt-out');
    await page.getByRole('button', { name: 'Remove webhook' }).click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'device settings: remove-webhook dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });

  it('Then a pool in edit and its delete dialog have none', async () => {
    const page = await open('/dashboard/pools', 'Pools');
    const create = page.getByRole('form', { name: 'New pool' });
    await create.getByLabel('Pool id').fill(poolId);
    await create.getByLabel('Name').fill('Axe shops');
    await create.getByRole('checkbox', { name: new RegExp(dashboard().stack.deviceId) }).check();
    await create.getByRole('button', { name: 'Create pool' }).click();
    await page.getByText('Pool “Axe shops” created.').waitFor();
    // The page with a pool made: the every-page sweep's.
    const row = page.getByTestId(`pool-${poolId}`);
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('button', { name: 'Cancel' }).waitFor();
    const problems = await audit(page, 'pools: edit');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'pools: delete dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });

  it('Then the Batches page has none', async () => {
    const { stack } = dashboard();
    const page = await open(`/dashboard/batches?device=${stack.deviceId}`, 'Batches', (p) =>
      p.locator('.chart-scroll'),
    );
    // The chart's numbers opened (the batch sent earlier is in them).
    await page.getByText('The numbers').click();
    await page.locator('.chart-numbers table').waitFor();
    await screenshots(page, 'a11y-batches');
    expect(await audit(page, 'batches')).to.deep.equal([]);
  });

  it('Then Settings → API with a new token, and its revoke dialog, have none', async () => {
    const page = await open('/dashboard/settings/api', 'Settings');
    // The page as it opens: the every-page sweep's.
    await page.getByLabel('Name').fill('axe token');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByTestId('new-token-value').waitFor();
    const problems = await audit(page, 'settings: new token');
    await page.locator('tr', { hasText: 'axe token' }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').waitFor();
    problems.push(...(await audit(page, 'settings: revoke dialog')));
    await page.keyboard.press('Escape');
    expect(problems).to.deep.equal([]);
  });
});

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
