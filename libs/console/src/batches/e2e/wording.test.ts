import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { waitFor, type Stack } from '@mgw/testing';
import {
  ADMIN_API_TOKEN,
  ADMIN_PASSWORD as PASSWORD,
  VIEWPORTS,
  screenshots,
  useDashboardStack,
} from '../../../test/browser.js';

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
