import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from './browser.js';

/**
 * The Devices and Messages pages follow the admin event stream (GET /api/admin/v1/events/stream):
 * what changes shows without a reload, and nothing is polled — the page asks for its data again
 * only when an event says it changed.
 */
describe('Dashboard: the live views follow the event stream in a real browser (chromium, whole stack)', function () {
  this.timeout(120_000);

  /** A TCP proxy to the API whose connections the test can cut (`down`) and let through again (`up`). */
  async function tcpProxy(port: number) {
    const open = new Set<net.Socket>();
    let cut = false;
    const server = net.createServer((client) => {
      if (cut) return client.destroy();
      const upstream = net.connect(port, '127.0.0.1');
      for (const s of [client, upstream]) {
        open.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          open.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      down() {
        cut = true;
        open.forEach((s) => s.destroy());
      },
      up() {
        cut = false;
      },
      close: () => {
        open.forEach((s) => s.destroy());
        return new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }
  const ACCOUNT = '15550007001';

  const dashboard = useDashboardStack(this);
  /** Admin API calls the page made, by path (without the query). */
  const calls: string[] = [];
  const callsTo = (p: string) => calls.filter((c) => c === `/api/admin/v1${p}`).length;

  it('When a device links and a message is sent through the API, then the open pages show it and its status change, without reload or polling', async () => {
    const { stack, page } = dashboard();
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith('/api/admin/v1/')) calls.push(url.pathname);
    });
    await page.goto(`${stack.apiUrl}/dashboard/devices`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', exact: true, level: 1 }).waitFor();
    const live = page.getByTestId('live-state');
    await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
      what: 'the stream live',
    });
    expect(await live.innerText()).to.equal('Live');
    // The page stays this one document: a reload would lose the mark.
    await page.evaluate(() => ((globalThis as unknown as { stayed?: boolean }).stayed = true));

    // Idle: no event, no request (a poll would have asked every 2 s).
    await page.waitForTimeout(1500);
    const idle = callsTo('/devices');
    await page.waitForTimeout(3000);
    expect(callsTo('/devices'), 'requests for /devices while nothing happened').to.equal(idle);

    // The device links: its session.status events bring the row, connected.
    await stack.linkByQr(ACCOUNT, 'Live Shop');
    const row = page.getByTestId(`device-${stack.deviceId}`);
    await row
      .getByTestId(`device-status-${stack.deviceId}`)
      .getByText('Connected')
      .waitFor({ timeout: 10_000 });
    expect(await row.textContent()).to.include('Live Shop');
    expect(callsTo('/devices')).to.be.above(idle);
    await screenshots(page, 'devices-live');

    // To the device's messages, by its link (no reload).
    await row.getByRole('link', { name: 'Messages' }).click();
    await page.getByRole('heading', { name: 'Messages', exact: true, level: 1 }).waitFor();
    await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
      what: 'the device stream live',
    });
    await page.getByText(`No recent messages for ${stack.deviceId}.`).waitFor();
    await page.waitForTimeout(800);
    const before = callsTo(`/devices/${stack.deviceId}/messages`);
    await page.waitForTimeout(4500);
    expect(
      callsTo(`/devices/${stack.deviceId}/messages`),
      'requests for the messages while nothing happened',
    ).to.equal(before);

    // A message sent through the public API appears, then turns sent and delivered, on its own.
    const sent = await stack.api<{ messageId: string }>('POST', '/send', {
      to: '15550007002',
      text: 'hello, live',
    });
    expect(sent.status).to.equal(202);
    const { messageId } = sent.body;
    const message = page.getByTestId(`message-${messageId}`);
    await message.waitFor({ timeout: 10_000 });
    const shown = () => message.locator('[data-status]').getAttribute('data-status');
    // The phone (the simulator) acknowledges it: queued, sent, then delivered, each shown as it happens.
    await waitFor(async () => ['delivered', 'read'].includes((await shown()) ?? ''), {
      timeoutMs: 20_000,
      what: 'the message delivered on the page',
    });
    const status = await shown();
    const record = (await stack.api<{ data: { status: string } }>('GET', `/messages/${messageId}`)).body;
    // The record is at least where the page is: it may have turned read since the page drew.
    expect(status === 'read' ? ['read'] : ['delivered', 'read'], JSON.stringify(record)).to.include(
      record.data.status,
    );
    expect(await message.getByTestId('message-text').innerText()).to.equal('hello, live');
    expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).to.equal(true);
    expect(callsTo(`/devices/${stack.deviceId}/messages`)).to.be.above(before);
    // One stream per page: the Devices page's closed when it went.
    await screenshots(page, 'messages-live');
  });
  it('When the connection is lost, then the badge says so, and once it is back the page catches up with what happened meanwhile', async () => {
    const { stack, page } = dashboard();
    // The page through a TCP proxy the test can cut: a network that goes away and comes back.
    const proxy = await tcpProxy(Number(new URL(stack.apiUrl).port));
    try {
      // Cookies do not depend on the port: the session of the first test signs this page in too.
      await page.goto(`${proxy.url}/dashboard/messages?device=${stack.deviceId}`);
      const live = page.getByTestId('live-state');
      await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
        what: 'the stream live',
      });
      await page.evaluate(() => ((globalThis as unknown as { stayed?: boolean }).stayed = true));
      proxy.down();
      await waitFor(async () => (await live.getAttribute('data-state')) === 'reconnecting', {
        what: 'the badge reconnecting',
      });
      expect(await live.innerText()).to.equal('Reconnecting…');
      const sent = await stack.api<{ messageId: string }>('POST', '/send', {
        to: '15550007003',
        text: 'sent while the page was cut off',
      });
      expect(sent.status).to.equal(202);
      await page.waitForTimeout(1000);
      const message = page.getByTestId(`message-${sent.body.messageId}`);
      expect(await message.count()).to.equal(0);
      await screenshots(page, 'messages-reconnecting');
      proxy.up();
      await waitFor(async () => (await live.getAttribute('data-state')) === 'live', {
        timeoutMs: 40_000,
        what: 'the stream live again',
      });
      await message.waitFor({ timeout: 10_000 });
      expect(await message.getByTestId('message-text').innerText()).to.equal(
        'sent while the page was cut off',
      );
      expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).to.equal(
        true,
      );
    } finally {
      await proxy.close();
    }
  });
});
