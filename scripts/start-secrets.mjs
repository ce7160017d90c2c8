/**
 * The secrets `npm start` keeps under the data directory when they are not set: the key that
 * seals credentials and messages in Redis, and the dashboard's password.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DATA_DIR, env, fail, say } from './start-context.mjs';

const KEY_LINE = /^[A-Za-z0-9_-]{1,16}:[A-Za-z0-9+/]{43}=$/;

/**
 * The key the services seal with: MGW_ENCRYPTION_KEY when set, else `<data dir>/encryption.key`,
 * made once (0600, created exclusively so two starts cannot make two keys). It is never printed:
 * losing it loses every linked device, so back it up with the Redis data.
 */
export function ensureEncryptionKey() {
  if (env.MGW_ENCRYPTION_KEY) return;
  const file = path.join(DATA_DIR, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(DATA_DIR, { recursive: true });
    const id = `local-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    try {
      writeFileSync(file, `${id}:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      say(`generated a key at ${file}`);
    } catch (err) {
      if (err.code !== 'EEXIST')
        fail(`could not write ${file}: ${err.message}`, 'set MGW_DATA_DIR to a writable directory');
    }
  }
  const line = readFileSync(file, 'utf8').trim();
  if (!KEY_LINE.test(line)) {
    fail(
      `${file} does not hold a key line (<keyId>:<base64 of 32 bytes>)`,
      'restore it from your backup, or set MGW_ENCRYPTION_KEY (the data sealed under a lost key cannot be read)',
    );
  }
  env.MGW_ENCRYPTION_KEY = line;
}

/**
 * The dashboard's password: ADMIN_PASSWORD when set, else `<data dir>/admin-password`, made once
 * (0600, exclusively) and printed only then; later starts say where it is.
 */
export function ensureAdminPassword() {
  if (env.ADMIN_PASSWORD) return {};
  const file = path.join(DATA_DIR, 'admin-password');
  let made = false;
  if (!existsSync(file)) {
    mkdirSync(DATA_DIR, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(18).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
      made = true;
    } catch (err) {
      if (err.code !== 'EEXIST')
        fail(`could not write ${file}: ${err.message}`, 'set MGW_DATA_DIR to a writable directory');
    }
  }
  const password = readFileSync(file, 'utf8').trim();
  if (password.length < 12)
    fail(`${file} holds no password of 12+ characters`, 'delete it to make a new one');
  env.ADMIN_PASSWORD = password;
  return { made, file };
}
