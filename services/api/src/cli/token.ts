/**
 * API token administration:
 *   npm run -s token -- create --name NAME [--device ID | --pool ID] [--workspace ID] [--expires-in 30d]
 *   npm run -s token -- list
 *   npm run -s token -- revoke ID
 * and the same for admin API tokens (automation of `/api/admin/v1`, see docs/dashboard.md):
 *   npm run -s token -- admin-create --name NAME [--expires-in 30d]
 *   npm run -s token -- admin-list
 *   npm run -s token -- admin-revoke ID
 * `create` and `admin-create` print the value alone on the last line of stdout (shown only once).
 */
import { parseArgs } from 'node:util';
import {
  closeRedis,
  createRedis,
  redisConfig,
  redisEnv,
  validateEnv,
  waitForRedis,
  type RedisClient,
} from '@mgw/common';
import { DEFAULT_WORKSPACE, DEVICE_ID_PATTERN, POOL_ID_PATTERN, WORKSPACE_ID_PATTERN } from '@mgw/contracts';
import {
  ADMIN_TOKENS,
  PoolStore,
  TokenStore,
  WorkspaceStore,
  TOKEN_LIFETIME_MAX_DAYS,
  isExpired,
  tokenLifetime,
  type TokenRecord,
} from '@mgw/store';
import { runCli } from './run-cli.js';
import { table } from './table.js';

const USAGE = `Usage:
  token create --name NAME [--device DEVICE_ID | --pool POOL_ID] [--workspace WORKSPACE_ID]
               [--expires-in <n>s|m|h|d, at most ${TOKEN_LIFETIME_MAX_DAYS}d]
  token list
  token revoke TOKEN_ID
  token admin-create --name NAME [--expires-in <n>s|m|h|d]
  token admin-list
  token admin-revoke ADMIN_TOKEN_ID`;

class UsageError extends Error {}

/** `admin: true`: an admin API token (the `admin-` commands), apart from the API tokens. */
type Command = { admin: boolean } & (
  | {
      kind: 'create';
      name: string;
      deviceId?: string;
      poolId?: string;
      workspaceId?: string;
      expiresInMs?: number;
    }
  | { kind: 'list' }
  | { kind: 'revoke'; id: string }
);

function parseCommand(argv: string[]): Command {
  const [given, ...rest] = argv;
  const admin = given?.startsWith('admin-') ?? false;
  const command = admin ? given!.slice('admin-'.length) : given;
  if (command === 'create') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        device: { type: 'string' },
        pool: { type: 'string' },
        workspace: { type: 'string' },
        'expires-in': { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    const name = values.name?.trim();
    if (!name) throw new UsageError('--name is required');
    if (
      admin &&
      (values.device !== undefined || values.pool !== undefined || values.workspace !== undefined)
    ) {
      throw new UsageError(
        'an admin token acts on every device: admin-create takes no --device, --pool or --workspace',
      );
    }
    if (values.device !== undefined && values.pool !== undefined) {
      throw new UsageError('a token acts on one device or sends through one pool: give --device or --pool');
    }
    if (values.pool !== undefined && !POOL_ID_PATTERN.test(values.pool)) {
      throw new UsageError(
        `--pool must be a pool id: 1-32 characters of a-z, 0-9, '_' or '-', starting with a letter or digit (got "${values.pool}")`,
      );
    }
    if (values.device !== undefined && !DEVICE_ID_PATTERN.test(values.device)) {
      throw new UsageError(
        `--device must be a device id: 1-32 characters of a-z, 0-9, '_' or '-', starting with a letter or digit (got "${values.device}")`,
      );
    }
    let expiresInMs: number | undefined;
    if (values['expires-in'] !== undefined) {
      const lifetime = tokenLifetime(values['expires-in']);
      if (lifetime === 'malformed') {
        throw new UsageError(
          `--expires-in must be a positive number followed by s, m, h or d, e.g. 30d (got "${values['expires-in']}")`,
        );
      }
      if (lifetime === 'too_long') {
        throw new UsageError(
          `--expires-in must be at most ${TOKEN_LIFETIME_MAX_DAYS}d (10 years); leave it out for a token that never expires (got "${values['expires-in']}")`,
        );
      }
      expiresInMs = lifetime;
    }
    if (values.workspace !== undefined && !WORKSPACE_ID_PATTERN.test(values.workspace)) {
      throw new UsageError(
        `--workspace must be a workspace id: 1-32 characters of a-z, 0-9, '_' or '-', starting with a letter or digit (got "${values.workspace}")`,
      );
    }
    return {
      admin,
      kind: 'create',
      name,
      deviceId: values.device,
      poolId: values.pool,
      workspaceId: values.workspace,
      expiresInMs,
    };
  }
  if (command === 'list') {
    if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest[0]}`);
    return { admin, kind: 'list' };
  }
  if (command === 'revoke') {
    if (rest.length !== 1 || !rest[0] || rest[0].startsWith('-')) {
      throw new UsageError(`${given} takes exactly one token id`);
    }
    return { admin, kind: 'revoke', id: rest[0] };
  }
  throw new UsageError(given ? `unknown command: ${given}` : 'a command is required');
}

function formatList(tokens: TokenRecord[], now: Date, admin: boolean): string {
  const rows = [
    ['ID', 'NAME', ...(admin ? [] : ['DEVICE/POOL']), 'CREATED', 'LAST USED', 'EXPIRES', 'EXPIRED'],
  ];
  for (const t of tokens) {
    rows.push([
      t.id,
      t.name,
      ...(admin ? [] : [scopeOf(t)]),
      t.createdAt,
      // When it last authenticated, to within a minute (TokenStore.noteUse).
      t.lastUsedAt ?? 'never',
      t.expiresAt ?? 'never',
      isExpired(t, now) ? 'yes' : 'no',
    ]);
  }
  return table(rows);
}

/** What an API token acts on: its device, its pool, its workspace's devices, or the default device. */
function scopeOf(t: TokenRecord): string {
  if (t.poolId) return `pool:${t.poolId}`;
  if (t.deviceId) return t.deviceId;
  return t.workspaceId ? `workspace:${t.workspaceId}` : '(default)';
}

async function run(command: Command): Promise<number> {
  const redis = createRedis(redisConfig(validateEnv([redisEnv])), 'producer', 'token-cli');
  try {
    await waitForRedis(redis, 5000);
    const store = command.admin ? new TokenStore(redis, ADMIN_TOKENS) : new TokenStore(redis);
    const kind = command.admin ? 'admin token' : 'token';
    if (command.kind === 'create') {
      // A token for a pool that does not exist could never send: say so instead of making it.
      const pool = command.poolId ? await new PoolStore(redis).get(command.poolId) : undefined;
      if (command.poolId && !pool) {
        process.stderr.write(`error: no pool with id ${command.poolId} (create it in the dashboard first)\n`);
        return 1;
      }
      // Only a pool's own workspace's tokens send through it (docs/workspaces.md "The console").
      if (pool && command.workspaceId !== undefined && command.workspaceId !== pool.workspace) {
        process.stderr.write(`error: pool ${pool.id} is not a pool of workspace ${command.workspaceId}\n`);
        return 1;
      }
      if (pool && pool.workspace !== DEFAULT_WORKSPACE) command.workspaceId = pool.workspace;
      const refused = command.workspaceId && (await workspaceRefusal(redis, command));
      if (refused) {
        process.stderr.write(`error: ${refused}\n`);
        return 1;
      }
      const { value, token } = await store.create(command);
      const scope = command.admin
        ? 'the admin API'
        : token.poolId
          ? `pool: ${token.poolId}`
          : token.deviceId
            ? `device: ${token.deviceId}`
            : token.workspaceId
              ? `every device of workspace ${token.workspaceId}`
              : 'device: (default)';
      process.stdout.write(
        `Created ${kind} ${token.id} (name: ${token.name}, ${scope}, ` +
          `expires: ${token.expiresAt ?? 'never'})\n` +
          `The value below is shown only once; store it now:\n${value}\n`,
      );
      return 0;
    }
    if (command.kind === 'list') {
      process.stdout.write(formatList(await store.list(), new Date(), command.admin));
      return 0;
    }
    if (await store.revoke(command.id)) {
      process.stdout.write(`Revoked ${kind} ${command.id}\n`);
      return 0;
    }
    process.stderr.write(`error: no ${kind} with id ${command.id}\n`);
    return 1;
  } finally {
    await closeRedis(redis);
  }
}

/**
 * Why a token of a workspace cannot be made (docs/workspaces.md): no such workspace (default is
 * made when first named), or a device it does not own.
 */
async function workspaceRefusal(
  redis: RedisClient,
  command: { workspaceId?: string; deviceId?: string },
): Promise<string | undefined> {
  const workspaces = new WorkspaceStore(redis);
  const id = command.workspaceId!;
  if (id === DEFAULT_WORKSPACE) await workspaces.ensureDefault();
  else if (!(await workspaces.get(id)))
    return `no workspace with id ${id} (create it in the admin API first)`;
  if (command.deviceId && (await workspaces.workspaceOf(command.deviceId)) !== id) {
    return `device ${command.deviceId} is not a device of workspace ${id}`;
  }
  return undefined;
}

await runCli(USAGE, parseCommand, run);
