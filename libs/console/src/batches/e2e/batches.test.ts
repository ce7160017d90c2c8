import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe('Dashboard Batches page in a real browser (chromium, whole stack against the simulator)', function () {
  this.timeout(90_000);
  const HOUR = 3_600_000;

  let page: Page;
  const requested: string[] = [];

  const dashboard = useDashboardStack(this);
  const stack = () => dashboard().stack;
  before(() => {
    dashboard().context.on('request', (r) => requested.push(r.url()));
    page = dashboard().page;
  });

  it("When a batch is sent, then the Batches page charts the hour's sent, delivered, read and failed messages", async () => {
    const s = stack();
    await s.linkByQr('15550009301', 'Batch Shop');
    // One contact reads, one only receives, one's phone sends no receipt, one is not on WhatsApp.
    const reader = '15550009311';
    const receiver = '15550009312';
    const silent = '15550009313';
    const nobody = '15550009314';
    await s.simApi('POST', '/contacts', { phone: reader, receipts: 'read' });
    await s.simApi('POST', '/contacts', { phone: receiver, receipts: 'delivered' });
    await s.simApi('POST', '/contacts', { phone: silent, receipts: 'none' });
    await s.simApi('POST', '/contacts', { phone: nobody, onWhatsApp: false });
    const sent = await s.api<{ messageId: string }>('POST', '/send', {
      to: [reader, receiver, silent, nobody],
      text: 'the spring sale starts today',
    });
    expect(sent.status).to.equal(202);
    const batchId = sent.body.messageId;
    let counts: Record<string, number> = {};
    await waitFor(
      async () => {
        const batch = await s.api<{ data?: { counts: Record<string, number> } }>(
          'GET',
          `/batches/${batchId}`,
        );
        counts = batch.body.data?.counts ?? {};
        return counts.read === 1 && counts.delivered === 1 && counts.sent === 1 && counts.failed === 1;
      },
      { timeoutMs: 30_000, what: `the batch to settle (last: ${JSON.stringify(counts)})` },
    );

    await page.goto(`${s.apiUrl}/dashboard`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Batches' }).click();
    await page.getByRole('heading', { name: 'Batches', exact: true, level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).to.equal('/dashboard/batches');
    // The only device is linked: it is the one shown, and the URL can name it.
    expect(await page.getByLabel('Device').inputValue()).to.equal(s.deviceId);
    // The page was called Campaigns: a bookmark of its old address opens it, the query kept.
    await page.goto(`${s.apiUrl}/dashboard/campaigns?device=${s.deviceId}`);
    await page.waitForURL(`${s.apiUrl}/dashboard/batches?device=${s.deviceId}`);
    await page.getByRole('heading', { name: 'Batches', exact: true, level: 1 }).waitFor();
    expect(
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Batches' })
        .getAttribute('aria-current'),
    ).to.equal('page');

    // Three sent (the one not on WhatsApp never was), two delivered (a read message was), one read, one failed.
    const totals = page.getByTestId('activity-totals');
    await totals.locator('[data-status="failed"][data-count="1"]').waitFor({ timeout: 20_000 });
    const total = async (status: string) =>
      Number(await totals.locator(`[data-status="${status}"]`).getAttribute('data-count'));
    expect({
      sent: await total('sent'),
      delivered: await total('delivered'),
      read: await total('read'),
      failed: await total('failed'),
    }).to.deep.equal({ sent: 3, delivered: 2, read: 1, failed: 1 });

    // 24 hour groups, oldest first, the last one the current hour, holding all of it.
    const groups = page.getByTestId('activity-hour');
    expect(await groups.count()).to.equal(24);
    const hours = await groups.evaluateAll((gs) => gs.map((g) => g.getAttribute('data-hour')!));
    const steps = hours.slice(1).map((h, i) => Date.parse(h) - Date.parse(hours[i]!));
    expect(new Set(steps)).to.deep.equal(new Set([HOUR]));
    expect(Date.now() - Date.parse(hours[23]!)).to.be.within(0, 2 * HOUR);
    const busy = page.locator('[data-testid="activity-hour"][data-sent="3"]');
    expect(await busy.count()).to.equal(1);
    const groupCounts = await busy.evaluate((g) =>
      ['sent', 'delivered', 'read', 'failed'].map((k) => [k, g.getAttribute(`data-${k}`)]),
    );
    expect(Object.fromEntries(groupCounts)).to.deep.equal({
      sent: '3',
      delivered: '2',
      read: '1',
      failed: '1',
    });
    // Each count is a bar of its own, with a tooltip that says it.
    const bars = await busy
      .locator('rect[data-status]')
      .evaluateAll((rs) =>
        rs.map((r) => [
          r.getAttribute('data-status'),
          r.getAttribute('data-count'),
          Number(r.getAttribute('height')),
        ]),
      );
    expect(bars.map(([s, c]) => [s, c])).to.deep.equal([
      ['sent', '3'],
      ['delivered', '2'],
      ['read', '1'],
      ['failed', '1'],
    ]);
    const [sentH, deliveredH, readH] = bars.map((b) => b[2] as number);
    expect(sentH).to.be.greaterThan(deliveredH!);
    expect(deliveredH).to.be.greaterThan(readH!);
    expect(await busy.locator('rect[data-status="failed"] title').textContent()).to.match(/: 1 failed$/);
    // The other hours are empty: no bars at all.
    expect(await page.locator('[data-testid="activity-hour"] rect[data-status]').count()).to.equal(4);

    await page.getByText('The numbers').click();
    const row = page.locator('.chart-numbers tbody tr');
    expect(await row.count()).to.equal(1);
    expect((await row.locator('td.num').allTextContents()).map(Number)).to.deep.equal([3, 2, 1, 1]);
    // Each header sits over its column's values: the same edge as the cell's text (numbers right,
    // the hour left), measured on the laid-out text.
    // (No named functions inside: tsx would wrap them in a helper the page does not have.)
    const edges = await page.locator('.chart-numbers table').evaluate((table) =>
      [...table.querySelectorAll('thead th')].map((th, i) => {
        const [head, cell] = [th, table.querySelectorAll('tbody tr:first-child td')[i]!].map((el) => {
          const range = table.ownerDocument.createRange();
          range.selectNodeContents(el);
          const r = range.getBoundingClientRect();
          return { left: r.left, right: r.right };
        });
        return { header: th.textContent, head: head!, cell: cell! };
      }),
    );
    expect(edges.map((e) => e.header)).to.deep.equal(['Hour', 'Sent', 'Delivered', 'Read', 'Failed']);
    expect(Math.abs(edges[0]!.head.left - edges[0]!.cell.left), 'Hour: left edges').to.be.below(2);
    for (const e of edges.slice(1))
      expect(Math.abs(e.head.right - e.cell.right), `${e.header}: right edges`).to.be.below(2);
    await screenshots(page, 'batches-numbers');
    await page.getByText('The numbers').click();

    // The chart's totals and a batch's counts count different things, and say so: the chart every
    // message that reached a status in the 24 hours, the batch where each of its messages is now.
    const legendWords = async (testId: string, scope = page.locator('body')) =>
      Object.fromEntries(
        await scope
          .getByTestId(testId)
          .first()
          .locator('li[data-status]')
          .evaluateAll((lis) =>
            lis.map((li) => [li.getAttribute('data-status'), li.textContent!.replace(/\s*\d+$/, '').trim()]),
          ),
      ) as Record<string, string>;
    const chart = await legendWords('activity-totals');
    expect(chart).to.deep.include({
      sent: 'Sent in 24 h',
      delivered: 'Delivered in 24 h',
      read: 'Read in 24 h',
    });
    const batchRow = page.getByTestId(`batch-${batchId}`);
    await batchRow.waitFor();
    const batch = await legendWords('batch-counts', batchRow);
    expect(batch).to.deep.include({
      sent: 'Sent, not yet delivered',
      delivered: 'Delivered, not yet read',
      read: 'Read',
    });
    expect(
      Object.values(chart).filter((w) => Object.values(batch).includes(w)),
      'no word counts two things',
    ).to.deep.equal([]);
    expect(
      await batchRow.getByTestId('batch-counts').locator('[data-status="sent"]').getAttribute('data-count'),
    ).to.equal('1');
    await screenshots(page, 'batches');

    const origin = new URL(s.apiUrl).origin;
    expect(requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'))).to.deep.equal([]);
  });

  it('When a device has sent nothing, then its chart is empty and says so', async () => {
    await page.goto(`${stack().apiUrl}/dashboard/batches?device=quiet-device`);
    await page
      .getByTestId('activity-empty')
      .getByText('quiet-device sent nothing in the last 24 hours.')
      .waitFor();
    expect(await page.getByTestId('activity-hour').count()).to.equal(24);
    expect(await page.locator('[data-testid="activity-hour"] rect[data-status]').count()).to.equal(0);
    expect(await page.getByLabel('Device').inputValue()).to.equal('quiet-device');
    await screenshots(page, 'batches-empty');
  });
});
