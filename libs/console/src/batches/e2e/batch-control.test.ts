import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { writeOverrides } from '@mgw/store';
import { waitFor, type Stack } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

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
