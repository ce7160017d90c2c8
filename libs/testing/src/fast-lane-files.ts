/**
 * The fast lane's list of test files (`npm run test:fast`): the `spec` of `.mocharc.fast.json`.
 * Apart from fast-lane.ts, whose loading puts the lane's guards in place.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The lane's configuration: its `spec` is the list of the lane's files. */
export const FAST_LANE_CONFIG = path.join(ROOT, '.mocharc.fast.json');

/** The lane's files, from its configuration (paths from the repository root). */
export function fastLaneFiles(): string[] {
  const config = JSON.parse(readFileSync(FAST_LANE_CONFIG, 'utf8')) as { spec?: string[] };
  return config.spec ?? [];
}
