import type { Logger } from '@mgw/common';
import type {
  AccountCommand,
  ChannelCommand,
  CheckContactsCommand,
  DeviceCommand,
  DeviceCommandOf,
  DeviceCommandReply,
  DeviceCommandType,
  GroupCommand,
  LabelCommand,
  MarkReadCommand,
} from '@mgw/contracts';
import { ContactIdentities } from '@mgw/store';
import type { DeviceRuntime } from '../device/device-runtime.js';
import type { RuntimeDeps } from '../device/device-setup.js';
import { runAccountCommand, type PhotoFetcher } from './account-commands.js';
import { runChannelCommand } from './channel-commands.js';
import { downloadMedia } from './download-media-command.js';
import { runGroupCommand } from './group-commands.js';
import { runLabelCommand } from './label-commands.js';
import { logOut } from './logout-command.js';
import { runReadCommand } from './read-command.js';

/**
 * The device commands this sender answers for the devices it holds (the holder's half of
 * libs/store/src/devices/device-commands.ts), in one table: command `type` -> handler. The table's
 * type makes the compiler refuse a `DeviceCommand` type without a handler, and hands each handler
 * its own member of the union. fleet/device-fleet.ts finds the device's runtime and calls
 * `runDeviceCommand`; the work of each capability is in its own file here (`run…Command`).
 */

/** What a handler works with: the device it acts on, the process's parts, and the way to answer. */
export interface CommandContext {
  /** The device's runtime (this sender holds its lease): its socket and the parts commands use. */
  device: Pick<
    DeviceRuntime,
    'conn' | 'contactChecks' | 'sender' | 'blocklist' | 'appState' | 'logout' | 'drainRetired'
  >;
  /** Answers the asker on `keys.commandReply(requestId)`; a handler answers once. */
  reply: (answer: DeviceCommandReply) => Promise<void>;
  /** After a logout: the fleet lets the device go (lease released, no cool-down). */
  giveUp: () => Promise<void>;
  /** What every device of this process is built from (main.ts builds it once). */
  deps: Pick<RuntimeDeps, 'redis' | 'encryption' | 'stores' | 'metrics' | 'fetchers'>;
  logger: Logger;
  /** Profile photos from a URL (`account-photo-set`): one guarded client for the process. */
  fetchPhoto: PhotoFetcher;
}

/** Does the work of command `C` and answers it through `ctx.reply`. */
export type CommandHandler<C> = (cmd: C, ctx: CommandContext) => Promise<void>;

/** One handler per command type, each typed for its own member of the union. */
export type CommandTable = { [T in DeviceCommandType]: CommandHandler<DeviceCommandOf<T>> };

// --- the table ----------------------------------------------------------------------------------

/** Every command type's handler; the types of one family (groups, account, …) share one. */
export const COMMANDS: CommandTable = {
  logout: logOut,
  'download-media': downloadMedia,
  'proxy-changed': proxyChanged,
  'check-contacts': checkContacts,
  'mark-read': markRead,
  'groups-list': group,
  'group-get': group,
  'group-create': group,
  'group-participants': group,
  'group-leave': group,
  'group-update': group,
  'group-invite': group,
  'group-join': group,
  'account-profile-get': account,
  'account-profile-set': account,
  'account-photo-set': account,
  'account-photo-remove': account,
  'account-contact-profile': account,
  'account-presence-set': account,
  'account-presence-subscribe': account,
  'account-block': account,
  'account-usernames-resolve': account,
  'app-state-label': label,
  'app-state-chat-label': label,
  'app-state-chat': label,
  'channel-create': channel,
  'channel-get': channel,
  'channel-update': channel,
  'channel-delete': channel,
  'channel-follow': channel,
  'channel-posts': channel,
};

/** Any handler of the table (each takes its own member of the union). */
type TableHandler = CommandTable[DeviceCommandType];

/**
 * Runs the command's handler. The command came off pub/sub as parsed JSON, typed but unchecked:
 * a `type` the table does not have (an API newer than this sender) is refused (`unknownCommand`).
 */
export async function runDeviceCommand(cmd: DeviceCommand, ctx: CommandContext): Promise<void> {
  // Own keys only: a `type` such as "constructor" is not in the table.
  const handler: TableHandler =
    typeof cmd.type === 'string' && Object.hasOwn(COMMANDS, cmd.type)
      ? COMMANDS[cmd.type]
      : unknownCommand(cmd.type);
  // `cmd.type` picked the handler of `cmd`'s own member, which the compiler cannot follow.
  await (handler as CommandHandler<DeviceCommand>)(cmd, ctx);
}

/**
 * A `type` the table does not have: an API newer than this sender during a rolling upgrade, or a
 * command written by hand into Redis. It is answered `unknown-command` (the asker's capability
 * maps that to its `failed` answer) and logged; nothing is done to the device. The chain of `type`
 * checks this table replaced sent such a command to the logout, its last branch: a device logged
 * out by a typo.
 */
function unknownCommand(type: unknown): TableHandler {
  return async (_cmd: DeviceCommand, { logger, reply }: CommandContext) => {
    logger.warn('device command of an unknown type refused', { type: String(type).slice(0, 64) });
    await reply({ ok: false, error: UNKNOWN_COMMAND });
  };
}

/** The reply's error for a command type this sender does not know. */
export const UNKNOWN_COMMAND = 'unknown-command';

// --- the handlers that hand a command to its capability's runner --------------------------------

async function checkContacts(cmd: CheckContactsCommand, { device, reply }: CommandContext): Promise<void> {
  await reply(await device.contactChecks.run(cmd));
}

async function group(cmd: GroupCommand, { device, deps, logger, reply }: CommandContext): Promise<void> {
  await reply(await runGroupCommand(device.conn, cmd, logger, deps.metrics));
}

async function account(cmd: AccountCommand, ctx: CommandContext): Promise<void> {
  const { device, deps, logger, fetchPhoto, reply } = ctx;
  const { redis, encryption, stores, metrics } = deps;
  await reply(
    await runAccountCommand(device, cmd, {
      redis,
      sealer: encryption,
      fetchPhoto,
      blocklist: device.blocklist,
      identities: new ContactIdentities(redis),
      sessions: stores.sessions,
      metrics,
      logger,
    }),
  );
}

async function markRead(cmd: MarkReadCommand, { device, logger, reply }: CommandContext): Promise<void> {
  await reply(await runReadCommand(device.conn, cmd, logger));
}

async function channel(cmd: ChannelCommand, { device, deps, logger, reply }: CommandContext): Promise<void> {
  await reply(
    await runChannelCommand(device.conn, cmd, { redis: deps.redis, sealer: deps.encryption, logger }),
  );
}

async function label(cmd: LabelCommand, { device, logger, reply }: CommandContext): Promise<void> {
  await reply(await runLabelCommand(device.conn, cmd, { settled: device.appState.settled, logger }));
}

/** The device's proxy was set or removed: reconnect through the new one (or directly). */
async function proxyChanged(_cmd: unknown, { device, reply }: CommandContext): Promise<void> {
  await device.conn.reconnectNow();
  await reply({ ok: true });
}
