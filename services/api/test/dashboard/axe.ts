import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { VIEWPORTS } from './browser.js';

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
/** What fails the test: serious and critical violations (minor and moderate are listed only). */
const BLOCKING = new Set(['serious', 'critical']);

/**
 * Runs axe on the page as it is, at laptop and phone widths. Prints every violation (id, impact,
 * the first targets) and answers the serious and critical ones, as `<width> <id> (<impact>): targets`.
 */
export async function audit(page: Page, name: string): Promise<string[]> {
  const blocking: string[] = [];
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    const { violations } = await new AxeBuilder({ page }).withTags(TAGS).analyze();
    for (const v of violations) {
      const targets = v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(' '))
        .join(', ');
      const line = `${label} ${v.id} (${v.impact}, ${v.nodes.length} nodes): ${targets}`;
      console.log(`    [axe] ${name}: ${line}`);
      if (BLOCKING.has(v.impact ?? '')) blocking.push(line);
    }
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  return blocking;
}
