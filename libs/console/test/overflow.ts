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

/**
 * Elements of `root` that stick out: wider than their box or past `root`'s sides, at both widths
 * (an ellipsis, `text-overflow: ellipsis` with the whole text in its title, is meant to, and so is
 * text for screen readers only).
 */
export async function overflowingInPane(page: Page, root: string): Promise<string[]> {
  const found: string[] = [];
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    const here = await page.locator(root).evaluateAll((roots) =>
      roots.flatMap((r) => {
        const box = r.getBoundingClientRect();
        return (
          [r, ...r.querySelectorAll('*')]
            .filter((e) => e.getClientRects().length > 0 || e === r)
            // Text for screen readers only is clipped to a pixel on purpose.
            .filter((e) => !e.closest('.visually-hidden'))
            .filter((e) => r.ownerDocument.defaultView!.getComputedStyle(e).textOverflow !== 'ellipsis')
            .filter((e) => {
              const style = r.ownerDocument.defaultView!.getComputedStyle(e);
              // A deliberate scroller (the messages pane) scrolls what it holds.
              const scroller = ['auto', 'scroll'].includes(style.overflowX) || style.overflowY === 'auto';
              const rect = e.getBoundingClientRect();
              return (
                (!scroller && e.scrollWidth > e.clientWidth + 1) ||
                rect.left < box.left - 1 ||
                rect.right > box.right + 1
              );
            })
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`)
        );
      }),
    );
    found.push(...here.map((h) => `${label} ${h}`));
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  return found;
}

/**
 * Elements of `root` that stick out: wider than their box (scrollWidth past clientWidth) or past
 * `root`'s sides, at both widths. Three kinds are meant to: what is inside a `.table-scroll` (a
 * wide table scrolls sideways in it), an ellipsis (`text-overflow: ellipsis`, the whole text in its
 * title) and text for screen readers only (`.visually-hidden`).
 */
export async function overflowingInTables(page: Page, root: string): Promise<string[]> {
  const found: string[] = [];
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    const here = await page.locator(root).evaluateAll((roots) =>
      roots.flatMap((r) => {
        const box = r.getBoundingClientRect();
        return (
          [r, ...r.querySelectorAll('*')]
            .filter((e) => e.getClientRects().length > 0 || e === r)
            .filter((e) => !e.parentElement?.closest('.table-scroll') || e === r)
            .filter((e) => r.ownerDocument.defaultView!.getComputedStyle(e).textOverflow !== 'ellipsis')
            // Text for screen readers only, clipped to 1 px on purpose.
            .filter((e) => !e.closest('.visually-hidden'))
            .filter((e) => {
              const rect = e.getBoundingClientRect();
              return (
                e.scrollWidth > e.clientWidth + 1 ||
                (!e.closest('.table-scroll') && (rect.left < box.left - 1 || rect.right > box.right + 1))
              );
            })
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}: ${(e.textContent ?? '').slice(0, 40)}`)
        );
      }),
    );
    found.push(...here.map((h) => `${label} ${h}`));
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  return found;
}
