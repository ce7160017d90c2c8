import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { markRestricted } from '@mgw/store';
import { WebhookReceiver, waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, useDashboardStack } from './browser.js';
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
