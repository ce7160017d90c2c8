/**
 * The dashboard's Batches page and a device's opt-outs in a real browser (Debian's chromium,
 * whole stack, simulator): the hour's chart of a batch; the device's batches paged, paused,
 * resumed and cancelled (scheduled statuses and channel posts among them); what a batch's time
 * and counts say on Batches and Devices, with keywords and number placeholders; the opt-outs
 * list, add, remove and the confirmation switch.
 *
 * Each `describe` is one suite as it was when it had a file of its own: its own helpers and its own
 * hooks, run one after the other. They share the mocha worker's one stack and one chromium
 * (useDashboardStack: the stack started by the worker's first dashboard suite and stopped when the
 * worker exits, reset before each suite to what a fresh one shows): each suite has a device, a
 * token, phone numbers and a browser context of its own.
 */
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { isOptedOut, optOut, readOptOutSettings, writeOverrides } from '@mgw/store';
import { waitFor, type Stack } from '@mgw/testing';
import {
  ADMIN_API_TOKEN,
  ADMIN_PASSWORD as PASSWORD,
  VIEWPORTS,
  screenshots,
  useDashboardStack,
} from './browser.js';

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

describe("Dashboard Batches page: the device's batches, paged, with pause, resume and cancel (chromium, whole stack against the simulator)", function () {
  this.timeout(120_000);

  interface Batch {
    batchId: string;
    state: string;
    total: number;
    counts: Record<string, number>;
  }

  let page: Page;

  const dashboard = useDashboardStack(this);
  const stack = () => dashboard().stack;
  before(() => {
    page = dashboard().page;
  });

  async function sendBatch(to: string[], text: string): Promise<{ batchId: string; ids: string[] }> {
    const res = await stack().api<{ messageId: string; messageIds: string[] }>('POST', '/send', { to, text });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return { batchId: res.body.messageId, ids: res.body.messageIds };
  }
  async function batch(batchId: string): Promise<Batch> {
    return (await stack().api<{ data: Batch }>('GET', `/batches/${batchId}`)).body.data;
  }
  /** Signs in (once per page) and opens the device's Batches page. */
  async function openBatches(s: Stack): Promise<void> {
    await page.goto(`${s.apiUrl}/dashboard`);
    // The page shows either its sign-in form or (signed in already) its navigation: wait for one.
    const password = page.getByLabel('Admin password');
    await password
      .or(page.getByRole('navigation', { name: 'Main' }))
      .first()
      .waitFor();
    if (await password.isVisible()) {
      await password.fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor();
    }
    await page.goto(`${s.apiUrl}/dashboard/batches?device=${s.deviceId}`);
  }

  /** Cancels a batch from its row, through the confirmation dialog, and waits for it to read so. */
  async function cancelFromRow(row: Locator): Promise<void> {
    await row.getByRole('button', { name: 'Cancel…' }).click();
    await page
      .getByRole('dialog', { name: 'Cancel this batch?' })
      .getByRole('button', { name: 'Cancel the batch' })
      .click();
    await row.locator('[data-testid="batch-state"][data-state="cancelled"]').waitFor();
  }

  async function settled(batchId: string, done: (l: Batch) => boolean, what: string): Promise<Batch> {
    let last: Batch | undefined;
    await waitFor(async () => done((last = await batch(batchId))), { timeoutMs: 30_000, what }).catch(
      (err: Error) => {
        throw new Error(`${err.message} (last: ${JSON.stringify(last)})`);
      },
    );
    return last!;
  }
  const stateOf = (row: Locator) => row.getByTestId('batch-state').getAttribute('data-state');
  const countOf = async (row: Locator, status: string) =>
    Number(
      await row.locator(`[data-testid="batch-counts"] [data-status="${status}"]`).getAttribute('data-count'),
    );

  it('When a batch is held by the first-contact cap, then the page shows why, pages older batches, and pauses, resumes and cancels it as the API does', async () => {
    const s = stack();
    await s.linkByQr('15550009401', 'Spring Sale Shop');
    const [reader, receiver] = ['15550009411', '15550009412'];
    await s.simApi('POST', '/contacts', { phone: reader, receipts: 'read' });
    await s.simApi('POST', '/contacts', { phone: receiver, receipts: 'delivered' });
    // Two new contacts a day: ten batches to two contacts go out; then a batch to them and three new
    // contacts reaches the two and holds the three.
    await writeOverrides(s.redis, s.deviceId, { firstContactCap: 2 });
    // (The first batch settles first: its two contacts are new until the account has a chat with them.)
    const earlier = [(await sendBatch([reader, receiver], 'welcome')).batchId];
    await settled(earlier[0]!, (l) => l.counts.read === 1 && l.counts.delivered === 1, 'the first batch');
    for (let i = 1; i < 10; i++) earlier.push((await sendBatch([reader, receiver], `reminder ${i}`)).batchId);
    for (const id of earlier) await settled(id, (l) => l.state === 'completed', `batch ${id} to complete`);
    const held = await sendBatch(
      [reader, receiver, '15550009413', '15550009414', '15550009415'],
      'the spring sale starts today',
    );
    const first = await settled(
      held.batchId,
      (l) => l.counts.held === 3 && l.counts.read === 1 && l.counts.delivered === 1,
      'two read or delivered and three held',
    );
    expect(first).to.deep.include({ state: 'active', total: 5 });
    expect(first.counts.queued).to.equal(3);

    await openBatches(s);
    const batches = page.getByTestId('batches');
    await batches.locator('.batch-row').first().waitFor();

    // Page 1: the ten newest, newest first: the held batch, then nine completed ones without controls.
    const rows = batches.locator('.batch-row');
    expect(await rows.count()).to.equal(10);
    const ids = await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-testid')));
    const newestFirst = [held.batchId, ...[...earlier].reverse()].map((id) => `batch-${id}`);
    expect(ids).to.deep.equal(newestFirst.slice(0, 10));
    expect(await batches.locator('[data-testid="batch-state"][data-state="completed"]').count()).to.equal(9);
    expect(await batches.getByRole('button', { name: /^(Pause|Resume|Cancel…)$/ }).count()).to.equal(2);
    const done = page.getByTestId(`batch-${earlier[9]}`);
    expect(await countOf(done, 'read')).to.equal(1);
    expect(await countOf(done, 'delivered')).to.equal(1);
    expect(await done.locator('.batch-bar [data-status]').count()).to.equal(2);

    // The held batch: its state, its held count and why.
    const row = page.getByTestId(`batch-${held.batchId}`);
    expect(await stateOf(row)).to.equal('active');
    const heldLine = row.getByTestId('batch-held');
    expect(await heldLine.getAttribute('data-count')).to.equal('3');
    expect(await heldLine.locator('[data-reason="first_contact_cap"]').count()).to.equal(1);
    expect(await heldLine.textContent()).to.match(
      /^3 held by the first-contact cap until .+\(in \d+ (min|h)\)$/,
    );
    expect(await countOf(row, 'queued')).to.equal(3);
    const parts = (r: Locator) =>
      r.locator('.batch-bar [data-status]').evaluateAll((ps) => ps.map((p) => p.getAttribute('data-status')));
    expect(await parts(row)).to.deep.equal(['delivered', 'read', 'held']);
    await screenshots(page, 'batches-control');

    // Show more: the oldest batch, on page 2, and no more pages.
    await batches.getByRole('button', { name: 'Show more' }).click();
    await page.getByTestId(`batch-${earlier[0]}`).waitFor();
    expect(await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-testid')))).to.deep.equal(
      newestFirst,
    );
    expect(await batches.getByRole('button', { name: 'Show more' }).count()).to.equal(0);

    // Pause: the page and the public API read it paused; Resume: active again.
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.locator('[data-testid="batch-state"][data-state="paused"]').waitFor();
    expect((await batch(held.batchId)).state).to.equal('paused');
    expect(await row.getByRole('button', { name: 'Pause' }).count()).to.equal(0);
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.locator('[data-testid="batch-state"][data-state="active"]').waitFor();
    expect((await batch(held.batchId)).state).to.equal('active');

    // Cancel asks first and says what it does; "Keep it" changes nothing.
    await row.getByRole('button', { name: 'Cancel…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this batch?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).to.include('A message already handed to WhatsApp may still go');
    expect(await dialog.textContent()).to.include('3 of 5 now');
    await screenshots(page, 'batches-cancel');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await batch(held.batchId)).state).to.equal('active');

    await row.getByRole('button', { name: 'Cancel…' }).click();
    await dialog.getByRole('button', { name: 'Cancel the batch' }).click();
    await row.locator('[data-testid="batch-state"][data-state="cancelled"]').waitFor();
    expect(await countOf(row, 'failed')).to.equal(3);
    expect(await countOf(row, 'queued')).to.equal(0);
    expect(await row.getByTestId('batch-held').count()).to.equal(0);
    expect(await parts(row)).to.deep.equal(['delivered', 'read', 'failed']);
    expect(await row.getByRole('button').count(), 'no control on a cancelled batch').to.equal(0);
    const after = await batch(held.batchId);
    expect(after.state).to.equal('cancelled');
    expect(after.counts).to.include({ queued: 0, held: 0, failed: 3 });
    await screenshots(page, 'batches-cancelled');
  });
  it('When a status update is scheduled, then the Batches page shows it beside the batches, labelled, and pauses and cancels it as a batch', async () => {
    const s = stack();
    if ((await s.api<{ status: string }>('GET', '/status')).body.status !== 'connected')
      await s.linkByQr('15550009401', 'Spring Sale Shop');
    const sendAt = new Date(Date.now() + 3600_000).toISOString();
    const posted = await s.api<{ data: { messageId: string; batchId: string } }>('POST', '/statuses', {
      text: 'Spring sale tomorrow',
      backgroundColor: '#25D366',
      audience: ['15550009411', '15550009412'],
      sendAt,
    });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    const { batchId } = posted.body.data;

    await openBatches(s);
    const row = page.getByTestId(`batch-${batchId}`);
    await row.waitFor();
    expect(await row.getByTestId('batch-kind').textContent()).to.equal('Status update');
    expect(await row.getByTestId('batch-scheduled').getAttribute('data-count')).to.equal('1');
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.locator('[data-testid="batch-state"][data-state="paused"]').waitFor();
    expect((await batch(batchId)).state).to.equal('paused');
    await screenshots(page, 'batches-status');
    await cancelFromRow(row);
    const record = await s.api<{ data: { status: string; error?: string } }>('GET', `/messages/${batchId}`);
    expect(record.body.data).to.include({ status: 'failed', error: 'cancelled' });
  });
  it('When a channel post is scheduled, then the Batches page shows it labelled beside the batches, and pauses, resumes and cancels it as a batch', async () => {
    const s = stack();
    if ((await s.api<{ status: string }>('GET', '/status')).body.status !== 'connected')
      await s.linkByQr('15550009401', 'Spring Sale Shop');
    const made = await s.api<{ data: { channel: { id: string } } }>('POST', '/channels', {
      name: 'Shop News',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(200);
    const posted = await s.api<{ data: { messageId: string; batchId: string } }>(
      'POST',
      `/channels/${made.body.data.channel.id}/posts`,
      { text: 'New stock on Monday', sendAt: new Date(Date.now() + 3600_000).toISOString() },
    );
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    const { batchId } = posted.body.data;

    await openBatches(s);
    const row = page.getByTestId(`batch-${batchId}`);
    await row.waitFor();
    expect(await row.getByTestId('batch-kind').textContent()).to.equal('Channel post');
    expect(await row.getByTestId('batch-scheduled').getAttribute('data-count')).to.equal('1');
    await row.getByRole('button', { name: 'Pause' }).click();
    await row.locator('[data-testid="batch-state"][data-state="paused"]').waitFor();
    await screenshots(page, 'batches-channel-post');
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.locator('[data-testid="batch-state"][data-state="active"]').waitFor();
    expect((await batch(batchId)).state).to.equal('active');
    await cancelFromRow(row);
    const record = await s.api<{ data: { status: string; error?: string } }>('GET', `/messages/${batchId}`);
    expect(record.body.data).to.include({ status: 'failed', error: 'cancelled' });
  });
});

describe('Dashboard wording: what a batch time means, the same count names on Devices and Batches, keywords and number placeholders (chromium, whole stack against the simulator)', function () {
  this.timeout(120_000);
  const ADMIN_TOKEN = ADMIN_API_TOKEN;
  /** Arabic and Latin opt-out keywords mixed: each must read where the list has it. */
  const OPT_OUT_KEYWORDS = ['إلغاء', 'STOP', 'توقف', 'unsubscribe'];

  interface Batch {
    state: string;
    counts: Record<string, number>;
  }

  const env = useDashboardStack(this);

  async function send(s: Stack, body: Record<string, unknown>): Promise<string> {
    const res = await s.api<{ messageId: string }>('POST', '/send', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageId;
  }
  async function settled(s: Stack, batchId: string, done: (l: Batch) => boolean, what: string) {
    await waitFor(async () => done((await s.api<{ data: Batch }>('GET', `/batches/${batchId}`)).body.data), {
      timeoutMs: 30_000,
      what,
    });
  }
  async function signIn(s: Stack, page: Page): Promise<void> {
    await page.goto(`${s.apiUrl}/dashboard`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor();
  }
  /** How many lines an element's text takes: its text's boxes, those more than half a line apart on two. */
  const lines = (el: Locator) =>
    el.evaluate((e) => {
      const doc = e.ownerDocument;
      const walker = doc.createTreeWalker(e, 4 /* NodeFilter.SHOW_TEXT */);
      const boxes: { top: number; height: number }[] = [];
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const range = doc.createRange();
        range.selectNodeContents(n);
        boxes.push(...[...range.getClientRects()].filter((r) => r.width > 0));
      }
      const tops: number[] = [];
      for (const b of boxes.sort((x, y) => x.top - y.top))
        if (tops.length === 0 || b.top - tops[tops.length - 1]! > b.height / 2) tops.push(b.top);
      return tops.length;
    });
  /** Every placeholder on the page that looks like a phone number. */
  const phonePlaceholders = (page: Page) =>
    page
      .locator('input[placeholder]')
      .evaluateAll((inputs) =>
        inputs.map((i) => i.getAttribute('placeholder') ?? '').filter((p) => /^\+?[\d\s-]{7,}$/.test(p)),
      );

  it('When batches are scheduled, cancelled and sent, then each says what happened and when, both pages name the counts alike, and keywords and placeholders read right', async () => {
    const { stack: s, page } = env();
    await s.linkByQr('15550009501', 'Wording Shop');
    for (const phone of ['15550009511', '15550009512'])
      await s.simApi('POST', '/contacts', { phone, receipts: 'delivered' });
    const sendAt = new Date(Date.now() + 86_400_000).toISOString();

    const sent = await send(s, { to: ['15550009511', '15550009512'], text: 'the shop is open' });
    await settled(s, sent, (l) => l.state === 'completed', 'the sent batch to complete');
    const cancelled = await send(s, { to: ['15550009521', '15550009522'], text: 'a mistake', sendAt });
    expect((await s.api('POST', `/batches/${cancelled}/cancel`)).status).to.equal(200);
    await settled(s, cancelled, (l) => l.state === 'cancelled', 'the batch to be cancelled');
    const scheduled = await send(s, {
      to: ['15550009531', '15550009532', '15550009533'],
      text: 'tomorrow’s sale',
      sendAt,
    });
    await settled(s, scheduled, (l) => l.counts.scheduled === 3, 'three scheduled');
    const put = await s.adminApi(ADMIN_TOKEN, 'PUT', `/devices/${s.deviceId}/opt-out-settings`, {
      optOutKeywords: OPT_OUT_KEYWORDS,
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);

    await signIn(s, page);

    // Batches: each batch's time says what happened to it.
    await page.goto(`${s.apiUrl}/dashboard/batches?device=${s.deviceId}`);
    const row = (id: string) => page.getByTestId(`batch-${id}`);
    const time = (id: string) => row(id).getByTestId('batch-time');
    await row(scheduled).waitFor();
    let legend: string[] = [];
    for (const size of Object.values(VIEWPORTS)) {
      await page.setViewportSize(size);
      const scheduledText = (await time(scheduled).textContent()) ?? '';
      expect(scheduledText).to.match(/^scheduled for .+ \(in (2[0-4]|1\d) h\)$/);
      const at = time(scheduled).locator('time');
      expect(await at.getAttribute('datetime')).to.equal(sendAt);
      expect(await at.getAttribute('title')).to.not.equal('');
      expect(await time(cancelled).textContent()).to.match(/^cancelled (just now|\d+ min ago)$/);
      expect(await time(sent).textContent()).to.match(/^sent (just now|\d+ min ago)$/);
      for (const id of [scheduled, cancelled]) expect(await time(id).textContent()).to.not.include('sent');
      legend = await row(scheduled)
        .locator('[data-testid="batch-counts"] li')
        .evaluateAll((lis) => lis.map((li) => `${li.getAttribute('data-status')}=${li.textContent}`));
    }
    expect(legend).to.include.members(['scheduled=Scheduled 3', 'queued=Queued 0']);
    await screenshots(page, 'wording-batches');

    // Devices: its count of waiting messages is named with the words Batches uses for them.
    await page.goto(`${s.apiUrl}/dashboard/devices`);
    const waiting = page.getByTestId(`device-waiting-${s.deviceId}`);
    await waitFor(async () => (await waiting.textContent())?.trim() === '3', {
      what: "the device's three scheduled messages",
    });
    const header = await page.locator('th.num').textContent();
    expect(header?.trim()).to.equal('Scheduled + queued');
    expect(await waiting.getAttribute('data-label')).to.equal('Scheduled + queued');
    expect(await page.getByRole('columnheader', { name: 'Queued', exact: true }).count()).to.equal(0);
    const badge = page.getByTestId(`device-health-${s.deviceId}`).locator('.badge');
    for (const size of Object.values(VIEWPORTS)) {
      await page.setViewportSize(size);
      expect(await lines(badge), `the health badge at ${size.width} px`).to.equal(1);
      const [b, card] = await badge.evaluate((e) =>
        [e, e.closest('.card')!].map((x) => x.getBoundingClientRect().right),
      );
      expect(b, `the badge inside its card at ${size.width} px`).to.be.at.most(card!);
    }
    for (const p of await phonePlaceholders(page)) expect(p).to.match(/^\d{7,15}$/);
    await screenshots(page, 'wording-devices');

    // Device settings: the keywords, each isolated, in their order; every number placeholder digits only.
    await page.goto(`${s.apiUrl}/dashboard/devices/${s.deviceId}`);
    const keywords = page.getByTestId('opt-out-keywords').locator('bdi');
    await waitFor(async () => (await keywords.count()) === OPT_OUT_KEYWORDS.length, {
      what: 'the keywords set',
    });
    for (const size of Object.values(VIEWPORTS)) {
      await page.setViewportSize(size);
      const shown = await keywords.evaluateAll((els) =>
        els.map((e) => {
          const r = e.getBoundingClientRect();
          const isolated = e.tagName === 'BDI' || e.getAttribute('dir') === 'auto';
          return { text: e.textContent, isolated, top: Math.round(r.top), left: r.left };
        }),
      );
      expect(shown.map((k) => k.text)).to.deep.equal(OPT_OUT_KEYWORDS);
      expect(shown.every((k) => k.isolated)).to.equal(true);
      // Read left to right, line by line, they come in the setting's order.
      const visual = [...shown].sort((a, b) => a.top - b.top || a.left - b.left).map((k) => k.text);
      expect(visual, `the keywords' order on screen at ${size.width} px`).to.deep.equal(OPT_OUT_KEYWORDS);
    }
    await page.getByLabel('Number to suppress').waitFor();
    const placeholders = await phonePlaceholders(page);
    expect(placeholders.length).to.be.at.least(1);
    for (const p of placeholders) expect(p).to.match(/^\d{7,15}$/);
    await screenshots(page, 'wording-device-settings');
  });
});

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
