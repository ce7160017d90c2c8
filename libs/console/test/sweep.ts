import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { auditHere } from './axe.js';
import { ARTIFACTS, VIEWPORTS } from './browser.js';
import { overflowingHere } from './overflow.js';

/**
 * The three checks of a page as it is, in one pass over the two widths (the page resized twice,
 * not once per check): at 1366 and at 390 px, a full-page screenshot from the top
 * (`<shot>-laptop.png`, `<shot>-phone.png`, as `screenshots` saves them), axe (`auditHere`) and
 * text out of its box (`overflowingHere`). Answers what axe found serious or critical and what
 * sticks out, each line led by its width; the page is back at laptop width after.
 */
export async function sweepPage(
  page: Page,
  name: string,
  shot = name,
): Promise<{ axe: string[]; overflow: string[] }> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const found = { axe: [] as string[], overflow: [] as string[] };
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    // From the top: a full-page shot of a scrolled page draws the sticky top bar mid-page.
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(ARTIFACTS, `${shot}-${label}.png`), fullPage: true });
    found.axe.push(...(await auditHere(page, name, label)));
    found.overflow.push(...(await overflowingHere(page, label)));
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  return found;
}
