import type { Page } from 'playwright-core';
import { VIEWPORTS } from './browser.js';

/**
 * Text that sticks out of its box, at laptop and phone widths: every shown element of the page
 * whose content is wider than it (`scrollWidth > clientWidth`) or that reaches past the window's
 * sides, and the page itself scrolling sideways. Meant to, and so left out: what is inside a
 * deliberate horizontal scroller (`overflow-x: auto | scroll`: a wide table's wrapper, the device's
 * tabs), a text cut with an ellipsis (`text-overflow: ellipsis`, its whole text in its title), and
 * `.visually-hidden` text (for screen readers only). Answers `<width> <element>: <why> "<text>"`.
 */
export async function overflowing(page: Page): Promise<string[]> {
  const faults: string[] = [];
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    faults.push(...(await overflowingHere(page, label)));
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  return faults;
}

/** The same at the width the page has now (`label` names it), once. */
export async function overflowingHere(page: Page, label: string): Promise<string[]> {
  // Anonymous functions only: the test runner names named ones with a helper the page lacks.
  const found = await page.locator('body').evaluateAll((bodies) =>
    bodies.flatMap((body) => {
      const view = body.ownerDocument.defaultView!;
      const root = body.ownerDocument.documentElement;
      const scrolls = ['auto', 'scroll'];
      const out: string[] = [];
      if (root.scrollWidth > root.clientWidth + 1)
        out.push(`the page scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
      for (const e of [...body.querySelectorAll('*')]) {
        if (e.getClientRects().length === 0 || e.closest('.visually-hidden')) continue;
        let inside = false;
        for (let p = e.parentElement; p && !inside; p = p.parentElement)
          inside = scrolls.includes(view.getComputedStyle(p).overflowX);
        const own = view.getComputedStyle(e);
        if (inside || own.textOverflow === 'ellipsis') continue;
        const rect = e.getBoundingClientRect();
        const wider = !scrolls.includes(own.overflowX) && e.scrollWidth > e.clientWidth + 1;
        const past = rect.left < -1 || rect.right > view.innerWidth + 1;
        if (!wider && !past) continue;
        const why = wider
          ? `${e.scrollWidth} > ${e.clientWidth}`
          : `past the window (${rect.left}, ${rect.right})`;
        const name = `${e.tagName.toLowerCase()}${typeof e.className === 'string' && e.className ? `.${e.className.trim().split(/\s+/).join('.')}` : ''}`;
        out.push(`${name}: ${why} "${(e.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60)}"`);
      }
      return out;
    }),
  );
  return found.map((f) => `${label} ${f}`);
}
