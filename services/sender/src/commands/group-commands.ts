import { serializeError, type Logger } from '@mgw/common';
import type { DeviceCommandReply, GroupCommand, Metrics } from '@mgw/contracts';
import { NotGroupAdminError, whatsappErrorCode, type DeviceSocket } from '@mgw/messenger';

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
    const status = err instanceof NotGroupAdminError ? 401 : whatsappErrorCode(err);
    logger.warn('group request failed', { type: cmd.type, status, err: serializeError(err) });
    return { ok: false, error: refusal(cmd, status) };
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
    case 'group-update':
      return { ok: true, data: { group: await groups.update(cmd.groupId, cmd.changes) } };
    case 'group-invite':
      return { ok: true, data: { invite: await groups.invite(cmd.groupId, cmd.revoke) } };
    case 'group-join':
      return { ok: true, data: { group: await groups.join(cmd.code) } };
  }
}

/**
 * WhatsApp's refusal of a whole request, named: 404 no such group and 403 not a member (the API
 * answers 404 for both); 401 not an admin (403); for a join, 406 no such code and 410 revoked.
 */
function refusal(cmd: GroupCommand, status: number | undefined): string {
  if (cmd.type === 'group-join' && (status === 406 || status === 410)) return 'invite-not-found';
  if (status === 404) return 'not-found';
  if (status === 403) return 'forbidden';
  if (status === 401) return 'not-admin';
  return 'failed';
}
