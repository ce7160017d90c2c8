/**
 * Loaded into the cost budget's sender (`NODE_OPTIONS=--expose-gc --import …`): on SIGUSR2 a full
 * collection, after which the file `MGW_SETTLE_FILE` holds how many were done. Each counted window
 * then starts from the same collected heap instead of with whatever the warm-up and the previous
 * window left to collect (a major collection falling inside one window and not another moves a
 * window's count by several per cent).
 */
import { writeFileSync } from 'node:fs';

let done = 0;
process.on('SIGUSR2', () => {
  globalThis.gc();
  done += 1;
  writeFileSync(process.env.MGW_SETTLE_FILE, String(done));
});
