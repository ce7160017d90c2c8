import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { VIEWPORTS } from './browser.js';

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
/** What fails the test: serious and critical violations (minor and moderate are listed only). */
const BLOCKING = new Set(['serious', 'critical']);

/**
 * Runs axe once on the page as it is, at the width it has now (`label` names it). Prints every
 * violation (id, impact, the first targets) and answers the serious and critical ones, as
 * `<label> <id> (<impact>): targets`.
 */
export async function auditHere(page: Page, name: string, label: string): Promise<string[]> {
  const blocking: string[] = [];
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
  return blocking;
}

/**
 * Runs axe on the page as it is, at laptop and phone widths. Prints every violation (id, impact,
 * the first targets) and answers the serious and critical ones, as `<width> <id> (<impact>): targets`.
 * Once per page state: a state another test audits already (the every-page sweep of
 * whole-console.test.ts audits each page with data on it) is not audited again.
 */
export async function audit(page: Page, name: string): Promise<string[]> {
  const blocking: string[] = [];
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    blocking.push(...(await auditHere(page, name, label)));
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  return blocking;
}
