import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { waitFor } from '@mgw/testing';
import { ADMIN_PASSWORD as PASSWORD, screenshots, useDashboardStack } from '../../../test/browser.js';

describe('Dashboard: the Chats page works by keyboard (chromium, whole stack, simulator)', function () {
  this.timeout(180_000);

  /** The focused element and its name: the text of its `<label for>`, else its aria-label or text. */
  const focusedLabel = (page: Page) =>
    page.locator('body').evaluate((body) => {
      const doc = body.ownerDocument;
      const el = doc.activeElement;
      if (!el) return '';
      const label = el.id ? doc.querySelector(`label[for="${el.id}"]`) : null;
      const name = label?.textContent ?? el.getAttribute('aria-label') ?? el.textContent ?? '';
      return `${el.tagName.toLowerCase()}:${name.trim()}`;
    });

  const focusedTestId = (page: Page) =>
    page
      .locator('body')
      .evaluate((body) => body.ownerDocument.activeElement?.getAttribute('data-testid') ?? '');

  const dashboard = useDashboardStack(this);
  const ACCOUNT = '15552100001';
  const [ana, ben, cy] = ['15552100011', '15552100012', '15552100013'];

  it('When three contacts wrote, then j/ArrowDown move between the rows, Enter opens a chat and r focuses its reply box', async () => {
    const { stack, page } = dashboard();
    await stack.linkByQr(ACCOUNT, 'State Shop');
    const write = (from: string, text: string) =>
      stack.simApi('POST', `/contacts/${from}/send`, { to: ACCOUNT, text });
    await write(ana, 'Hello from Ana');
    await write(ben, 'Hello from Ben');
    await write(cy, 'Hello from Cy');
    await waitFor(
      async () =>
        (await stack.api<{ data: { chats: unknown[] } }>('GET', '/chats')).body.data.chats.length === 3,
      { timeoutMs: 20_000, what: 'three chats' },
    );

    await page.goto(`${stack.apiUrl}/dashboard/chats?device=${stack.deviceId}`);
    await page.getByLabel('Admin password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId(`chat-${ana}`).waitFor({ timeout: 15_000 });
    // The rows in the page's order (the chats' last activity; three messages a moment apart may
    // come in any order), once the live list has settled.
    const rows = () =>
      page
        .locator('.chat-list [data-testid^="chat-"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-testid') ?? ''));
    let order: string[] = [];
    await waitFor(
      async () => {
        const seen = await rows();
        const settled = seen.length === 3 && seen.join() === order.join();
        order = seen;
        return settled;
      },
      { timeoutMs: 15_000, intervalMs: 500, what: 'the three rows in a settled order' },
    );
    expect([...order].sort()).to.deep.equal([ana, ben, cy].map((p) => `chat-${p}`).sort());
    const [first, second, third] = order as [string, string, string];
    const writer = { [`chat-${ana}`]: 'Ana', [`chat-${ben}`]: 'Ben', [`chat-${cy}`]: 'Cy' };

    /** The row the focus is on, once the page has handled the key (a busy machine may lag). */
    const focusOn = (id: string, what = 'the focus') =>
      waitFor(async () => (await focusedTestId(page)) === id, {
        timeoutMs: 5_000,
        what: `${what} on ${id}`,
      });
    // Only the keyboard from here: j from the page reaches the first row, then j and ArrowDown move on.
    await page.getByRole('heading', { name: 'Chats', exact: true, level: 1 }).click();
    await page.keyboard.press('j');
    await focusOn(first);
    await page.keyboard.press('j');
    await focusOn(second);
    await page.keyboard.press('ArrowDown');
    await focusOn(third);
    await page.keyboard.press('ArrowDown');
    await focusOn(third, 'the last row staying');
    await page.keyboard.press('k');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowDown');
    await focusOn(second);
    await page.keyboard.press('Enter');
    const pane = page.getByRole('region', { name: /Messages of/ });
    await pane.getByRole('heading', { level: 2 }).waitFor();
    await pane.getByText(`Hello from ${writer[second]}`).waitFor();
    expect(page.url()).to.include(`chat=${second.slice('chat-'.length)}`);
    await focusOn(second, 'the opened row keeping the focus');
    await page.keyboard.press('r');
    expect(await focusedLabel(page)).to.equal('textarea:Reply');
    // Typed in the box, the page's keys are letters: nothing moves, nothing is lost.
    await page.keyboard.type('jkr');
    expect(await pane.getByLabel('Reply').inputValue()).to.equal('jkr');
    expect(await focusedLabel(page)).to.equal('textarea:Reply');
    await screenshots(page, 'chats-keyboard');
  });
});
