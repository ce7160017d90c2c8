import { serializeError, type Logger } from '@mgw/common';
import type { DeviceCommandReply, GroupCommand, Metrics } from '@mgw/contracts';
import { whatsappErrorCode, type DeviceSocket } from '@mgw/messenger';

/** How long the holder waits for its socket to open before it answers that it cannot. */
const OPEN_WAIT_MS = 5_000;

/**
 * The group routes, the holder's half: list, read, create, change participants and leave, through
 * the device's socket and its group cache (GroupDirectory). The answer goes back in the reply's
 * `data`; a WhatsApp refusal of the whole request is `{ ok: false, error }` with WhatsApp's code
 * (`not-found`, `forbidden`, …) and nothing else of it (no numbers or subjects in logs).
 */
export async function runGroupCommand(
  conn: DeviceSocket,
  cmd: GroupCommand,
  logger: Logger,
  metrics: Metrics,
): Promise<DeviceCommandReply> {
  const reply = await answer(conn, cmd).catch((err: unknown): DeviceCommandReply => {
    const status = whatsappErrorCode(err);
    logger.warn('group request failed', { type: cmd.type, status, err: serializeError(err) });
    return {
      ok: false,
      error: status === 404 ? 'not-found' : status === 403 || status === 401 ? 'forbidden' : 'failed',
    };
  });
  metrics.groupCommands.inc({ type: cmd.type, outcome: reply.ok ? 'ok' : 'failed' });
  return reply;
}

async function answer(conn: DeviceSocket, cmd: GroupCommand): Promise<DeviceCommandReply> {
  if (!(await conn.waitForOpen(OPEN_WAIT_MS))) return { ok: false, error: 'not-connected' };
  const groups = conn.groups;
  switch (cmd.type) {
    case 'groups-list':
      return { ok: true, data: { groups: await groups.all() } };
    case 'group-get':
      return { ok: true, data: { group: await groups.detail(cmd.groupId) } };
    case 'group-create':
      return { ok: true, data: await groups.create(cmd.subject, cmd.participants) };
    case 'group-participants':
      return {
        ok: true,
        data: { participants: await groups.change(cmd.groupId, cmd.action, cmd.participants) },
      };
    case 'group-leave':
      await groups.leave(cmd.groupId);
      return { ok: true, data: { participants: [] } };
  }
}
