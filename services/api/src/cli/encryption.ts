/**
 * Encryption key administration:
 *   npm run -s keys -- generate [--id ID]   prints a new key line `<id>:<base64>` (nothing stored)
 *   npm run -s keys -- status               values per encrypted family, by key id, and plaintext
 *   npm run -s keys -- reencrypt            rewrites every value not under MGW_ENCRYPTION_KEY
 * status and reencrypt read REDIS_URL (or REDIS_CLUSTER_NODES), MGW_ENCRYPTION_KEY and MGW_ENCRYPTION_OLD_KEYS.
 * Rotation: docs/security.md, "Encryption at rest".
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { closeRedis, createRedis, redisConfig, redisEnv, validateEnv, waitForRedis } from '@mgw/common';
import {
  Encryption,
  EncryptionKey,
  KEY_BYTES,
  KEY_ID_PATTERN,
  encryptionConfig,
  encryptionEnv,
  encryptionStatus,
  reencrypt,
  type FamilyStatus,
  type ReencryptResult,
} from '@mgw/store';
import { runCli } from './run-cli.js';
import { table } from './table.js';

const USAGE = `Usage:
  keys generate [--id KEY_ID]
  keys status
  keys reencrypt`;

class UsageError extends Error {}

type Command = { kind: 'generate'; id: string } | { kind: 'status' } | { kind: 'reencrypt' };

/** A default id that sorts by date and does not collide with a key made the same day. */
function defaultKeyId(now: Date): string {
  return `k${now.toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(2).toString('hex')}`;
}

function parseCommand(argv: string[]): Command {
  const [command, ...rest] = argv;
  if (command === 'generate') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { id: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const id = values.id ?? defaultKeyId(new Date());
    if (!KEY_ID_PATTERN.test(id)) {
      throw new UsageError(`--id must be 1-16 characters of A-Z, a-z, 0-9, _ or - (got "${id}")`);
    }
    return { kind: 'generate', id };
  }
  if (command === 'status' || command === 'reencrypt') {
    if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`);
    return { kind: command };
  }
  throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
}

function formatStatus(statuses: FamilyStatus[], enc: Encryption): string {
  const rows = [
    ['FAMILY', `CURRENT (${enc.currentKeyId})`, 'OLD KEYS', 'UNKNOWN KEYS', 'PLAINTEXT', 'MALFORMED'],
  ];
  let pending = 0;
  let unreadable = 0;
  for (const s of statuses) {
    const ids = Object.entries(s.sealed).filter(([id]) => id !== enc.currentKeyId);
    const old = ids.filter(([id]) => enc.knows(id));
    const unknown = ids.filter(([id]) => !enc.knows(id));
    const list = (entries: [string, number][]) => entries.map(([id, n]) => `${id}=${n}`).join(' ') || '-';
    rows.push([
      s.family,
      String(s.sealed[enc.currentKeyId] ?? 0),
      list(old),
      list(unknown),
      String(s.plaintext),
      String(s.malformed),
    ]);
    pending += old.reduce((n, [, c]) => n + c, 0) + s.plaintext;
    unreadable += unknown.reduce((n, [, c]) => n + c, 0) + s.malformed;
  }
  const summary =
    pending === 0 && unreadable === 0
      ? 'Every value is under the current key: old keys may be dropped.'
      : `${pending} value(s) to re-encrypt (run reencrypt)` +
        (unreadable > 0 ? `; ${unreadable} value(s) no configured key can open` : '') +
        '.';
  return table(rows) + summary + '\n';
}

function formatReencrypt(results: ReencryptResult[]): string {
  const rows = [['FAMILY', 'REWRITTEN', 'ALREADY CURRENT', 'CHANGED MEANWHILE', 'FAILED']];
  for (const r of results) {
    rows.push([r.family, String(r.rewritten), String(r.current), String(r.changed), String(r.failed)]);
  }
  const errors = results.flatMap((r) => r.errors.map((e) => `  ${r.family}: ${e}\n`)).join('');
  return table(rows) + (errors ? `Not re-encrypted:\n${errors}` : '');
}

async function run(command: Command): Promise<number> {
  if (command.kind === 'generate') {
    process.stdout.write(`${new EncryptionKey(command.id, randomBytes(KEY_BYTES)).toLine()}\n`);
    return 0;
  }
  const env = validateEnv([redisEnv, encryptionEnv]);
  const enc = Encryption.fromConfig(encryptionConfig(env));
  const redis = createRedis(redisConfig(env), 'producer', 'keys-cli');
  try {
    await waitForRedis(redis, 5000);
    if (command.kind === 'status') {
      process.stdout.write(formatStatus(await encryptionStatus(redis, enc), enc));
      return 0;
    }
    const results = await reencrypt(redis, enc);
    process.stdout.write(formatReencrypt(results));
    // Values changed meanwhile were written by a running service: under the current key when
    // every service already runs with it. A second run (or `status`) confirms.
    return results.some((r) => r.failed > 0) ? 1 : 0;
  } finally {
    await closeRedis(redis);
  }
}

await runCli(USAGE, parseCommand, run);
