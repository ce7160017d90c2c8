import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { WebhookReceiver, waitFor } from '@mgw/testing';
import { audit } from '../../../test/axe.js';
import {
  ADMIN_PASSWORD as PASSWORD,
  VIEWPORTS,
  screenshots,
  useDashboardStack,
} from '../../../test/browser.js';

describe("Dashboard: a device's Events tab in a real browser (chromium, whole stack with the notifier)", function () {
  this.timeout(150_000);

  /**
   * Elements of `root` that stick out (wider than their box, or past `root`'s sides) at both widths.
   * The payload's `<pre>` scrolls sideways on purpose (what is in it is not checked) and
   * `.visually-hidden` text is for screen readers only.
   */
  async function overflowing(page: Page, root: string): Promise<string[]> {
    const found: string[] = [];
    for (const [label, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(150);
      const here = await page.locator(root).evaluateAll((roots) =>
        roots.flatMap((r) => {
          const box = r.getBoundingClientRect();
          return [r, ...r.querySelectorAll('*')]
            .filter((e) => e.getClientRects().length > 0 || e === r)
            .filter((e) => !e.parentElement?.closest('.event-json') && !e.closest('.visually-hidden'))
            .filter((e) => {
              const rect = e.getBoundingClientRect();
              const scroller = e.classList.contains('event-json');
              return (
                (!scroller && e.scrollWidth > e.clientWidth + 1) ||
                rect.left < box.left - 1 ||
                rect.right > box.right + 1
              );
            })
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`);
        }),
      );
      found.push(...here.map((h) => `${label} ${h}`));
    }
    await page.setViewportSize(VIEWPORTS.laptop);
    return found;
  }

  const ctx = useDashboardStack(this);
  let receiver: WebhookReceiver | undefined;
  after(async () => receiver?.close());

  it("When the device's webhook refuses its events, then the tab shows the log, the failure and the waiting retries, and Retry now delivers them", async () => {
    const { stack, page } = ctx();
    receiver = await WebhookReceiver.startFor(stack);
    let refusing = true;
    receiver.respond = () => (refusing ? 500 : 204);
    await stack.linkByQr('15550620001', 'Events Tab Account');
    const retries = `mgw:{${stack.deviceId}}:webhook:retries`;
    await waitFor(async () => (await stack.redis.zcard(retries)) >= 2, {
      timeoutMs: 30_000,
      what: 'both session events waiting for a retry',
    });
    const refused = receiver.deliveries.map((d) => d.id);

    await page.goto(`${stack.apiUrl}/dashboard/devices/${stack.deviceId}/events`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: `Events of ${stack.deviceId}` }).waitFor();
    expect(await page.getByRole('link', { name: 'Events' }).getAttribute('aria-current')).to.equal('page');

    // The webhook: its URL, the refusal, two retries two minutes away, nothing dropped.
    const hook = page.getByTestId('outlet-webhook');
    expect(await hook.getByTestId('webhook-url').textContent()).to.equal(receiver.url);
    await hook.getByTestId('webhook-last-failure').getByText('HTTP 500').waitFor();
    const fact = (id: string) => hook.getByTestId(id).locator('dd');
    expect(await fact('webhook-last-delivery').textContent()).to.equal('none yet');
    expect(await fact('webhook-retries').textContent()).to.match(/^2 · next in [12] min$/);
    expect(await fact('webhook-exhausted').textContent()).to.equal('0');
    await page.getByTestId('outlet-rabbitmq').getByText('Not configured').waitFor();

    // The log, newest first: connected before connecting, each with its payload on demand.
    const log = page.getByTestId('event-log');
    await waitFor(async () => (await log.getByTestId('event-row').count()) >= 2, { what: 'two rows' });
    const first = log.getByTestId('event-row').first();
    expect(await first.locator('.event-type').textContent()).to.equal('session.status');
    expect(await first.locator('.event-summary').textContent()).to.include('connected');
    await first.locator('summary').click();
    const json = await first.locator('.event-json').textContent();
    expect(JSON.parse(json ?? '{}')).to.include({ deviceId: stack.deviceId, status: 'connected' });
    expect(await first.getAttribute('data-event-id')).to.be.oneOf(refused);

    await screenshots(page, 'device-events-failing');
    expect(await audit(page, 'device events (failing webhook)')).to.deep.equal([]);
    expect(await overflowing(page, '.device-events')).to.deep.equal([]);

    // Retry now, through the button: both go out at once, with the webhook-ids of their refusals.
    refusing = false;
    const queued = await stack.redis.zrange(retries, 0, -1);
    await hook.getByRole('button', { name: 'Retry now' }).click();
    await hook.getByText('2 events are due now: the notifier delivers them in order.').waitFor();
    await waitFor(() => receiver!.accepted().length === 2, { timeoutMs: 20_000, what: 'both delivered' });
    expect(receiver.accepted().map((d) => d.id)).to.deep.equal(queued);
    await hook.getByTestId('webhook-last-delivery').getByText('HTTP 204').waitFor({ timeout: 15_000 });
    await waitFor(async () => (await fact('webhook-retries').textContent()) === '0', {
      timeoutMs: 15_000,
      what: 'no retry left on the page',
    });
    expect(await hook.getByRole('button', { name: 'Retry now' }).isDisabled()).to.equal(true);

    // A type filter with nothing to show says what to do.
    await log.getByLabel('Type').selectOption('message.failed');
    await log.getByText('No message.failed event in the log.', { exact: false }).waitFor();
    await log.getByLabel('Type').selectOption('session.status');
    await waitFor(async () => (await log.getByTestId('event-row').count()) >= 2, { what: 'filtered rows' });

    await screenshots(page, 'device-events-delivered');
    expect(await audit(page, 'device events (delivered)')).to.deep.equal([]);
    expect(await overflowing(page, '.device-events')).to.deep.equal([]);
  });
});
