/**
 * What every part of `npm start` (start.mjs) shares: the repository's root, how the start speaks
 * (`[start]` lines on stderr; a failure says how to fix it and exits 1), the environment the
 * services are given (filled in as the start goes: the key, the password, HOST, the sandbox) and
 * the data directory.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const say = (msg) => process.stderr.write(`[start] ${msg}\n`);
export const fail = (msg, fix) => {
  say(msg);
  if (fix) say(fix);
  process.exit(1);
};
export const env = { ...process.env };
env.REDIS_URL ??= 'redis://127.0.0.1:6379';
export const DATA_DIR = env.MGW_DATA_DIR ?? path.join(ROOT, '.data');
