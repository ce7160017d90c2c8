/**
 * Device commands: only the sender that holds a device's lease has its WhatsApp socket, so what
 * needs the socket is published on `keys.deviceCommands()` for that sender, which answers on
 * `keys.commandReply(requestId)` (libs/store/src/devices/device-commands.ts carries both ways).
 * Each capability keeps its own commands and results in its contract file (groups.ts, account.ts,
 * …); this file gathers them into the one union the holder dispatches on by `type`
 * (services/sender/src/commands/command-table.ts).
 */
import type { AccountCommand, AccountCommandResult } from './account.js';
import type { MarkReadCommand, MarkReadResult } from './chats.js';
import type { GroupCommand, GroupCommandResult } from './groups.js';
import type { LabelCommand, LabelCommandResult } from './labels.js';
import type { ChannelCommand, ChannelCommandResult } from './channels.js';

/**
 * A command published on `keys.deviceCommands()` for the owner of `deviceId`: log it out,
 * download the attachment of an inbound message (the bytes go to `keys.mediaDownload`, sealed),
 * look numbers up, or one of a capability's commands (groups, account, read receipts, labels,
 * channels).
 */
export type DeviceCommand =
  | { type: 'logout'; deviceId: string; requestId: string }
  | { type: 'download-media'; deviceId: string; requestId: string; messageId: string }
  /** The device's proxy was set or removed: reconnect through the new one (or directly). */
  | { type: 'proxy-changed'; deviceId: string; requestId: string }
  | CheckContactsCommand
  | GroupCommand
  | AccountCommand
  | MarkReadCommand
  | LabelCommand
  | ChannelCommand;

/** Every device command's `type`: the sender's command table has a handler for each. */
export type DeviceCommandType = DeviceCommand['type'];

/** The member of `DeviceCommand` whose `type` is `T` (what that type's handler receives). */
export type DeviceCommandOf<T extends DeviceCommandType> = Extract<DeviceCommand, { type: T }>;

/**
 * Look these numbers up at WhatsApp (POST /contacts/check, the numbers not cached): in queries of
 * `batchSize` numbers, `pauseMs` apart; the answers go to the contact cache (`keys.contact`).
 */
export interface CheckContactsCommand {
  type: 'check-contacts';
  deviceId: string;
  requestId: string;
  phones: string[];
  batchSize: number;
  pauseMs: number;
}

/** The owner's answer, pushed on `keys.commandReply(requestId)`. */
export interface DeviceCommandReply {
  ok: boolean;
  error?: string;
  /**
   * The answer of a group command (groups.ts), an account command (account.ts), a mark-read
   * (chats.ts), a label or chat-state command (labels.ts) or a channel command (channels.ts).
   */
  data?:
    GroupCommandResult | AccountCommandResult | MarkReadResult | LabelCommandResult | ChannelCommandResult;
}
