import { serializeError } from '@mgw/common';
import type { DeviceCommand, DeviceCommandReply } from '@mgw/contracts';
import type { CommandContext } from './command-table.js';

/**
 * `logout` (POST /disconnect, through the connection service: only the holder has the socket):
 * log the device out at WhatsApp and answer; once that worked, let the sends in flight end (they
 * fail at once) and give the device up. Takes any command: it is also what a `type` the table does
 * not know ends in (command-table.ts, `unknownCommand`).
 */
export async function logOut(cmd: DeviceCommand, ctx: CommandContext): Promise<void> {
  const { device, logger, reply, giveUp } = ctx;
  let answer: DeviceCommandReply;
  try {
    await device.logout();
    answer = { ok: true };
  } catch (err) {
    logger.error('logout failed', { deviceId: cmd.deviceId, err: serializeError(err) });
    answer = { ok: false, error: (err as Error).message };
  }
  await reply(answer);
  if (answer.ok) {
    await device.drainRetired();
    await giveUp();
  }
}
