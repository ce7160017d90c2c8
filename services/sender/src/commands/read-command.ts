import { serializeError, type Logger } from '@mgw/common';
import type { DeviceCommandReply, MarkReadCommand } from '@mgw/contracts';
import { sendReadReceipts, type DeviceSocket } from '@mgw/messenger';

/** How long the holder waits for its socket to open before it answers that it cannot. */
const OPEN_WAIT_MS = 5_000;

/**
 * POST /chats/:chatId/read and POST /messages/:id/read, the holder's half: the read receipts go
 * out on the device's socket as the account's privacy allows, asked afresh (read-receipts.ts); the answer says
 * whether the contacts were shown them. The API then updates the chat's unread count.
 */
export async function runReadCommand(
  conn: DeviceSocket,
  cmd: MarkReadCommand,
  logger: Logger,
): Promise<DeviceCommandReply> {
  if (!(await conn.waitForOpen(OPEN_WAIT_MS)) || !conn.socket) return { ok: false, error: 'not-connected' };
  try {
    const receiptsShown = await sendReadReceipts(conn.socket, cmd.keys, 0);
    logger.info('read receipts sent', { deviceId: cmd.deviceId, count: cmd.keys.length, receiptsShown });
    return { ok: true, data: { receiptsShown } };
  } catch (err) {
    logger.warn('read receipts not sent', { deviceId: cmd.deviceId, err: serializeError(err) });
    return { ok: false, error: 'failed' };
  }
}
