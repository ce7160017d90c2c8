import { serializeError, type Logger } from '@mgw/common';
import type { RedisClient } from '@mgw/common';
import { keys, type ChannelCommand, type DeviceCommandReply } from '@mgw/contracts';
import { storageContext, type Sealer } from '@mgw/store';
import {
  NotChannelOwnerError,
  PhotoRefusedError,
  channelMetadata,
  channelPosts,
  createChannel,
  deleteChannel,
  followChannel,
  updateChannel,
  whatsappErrorCode,
  type DeviceSocket,
} from '@mgw/messenger';

/** How long the holder waits for its socket to open before it answers that it cannot. */
const OPEN_WAIT_MS = 5_000;

/**
 * The channel routes, the holder's half: create, read, update, delete, follow and unfollow a
 * channel, and read its posts' counts, through the device's socket. The answer is the channel (and
 * the posts) in the reply's `data`; a refusal is `{ ok: false, error }`: `not-found`, `not-owner`,
 * `bad-picture`, `failed` (no names or ids in logs).
 */
export async function runChannelCommand(
  conn: DeviceSocket,
  cmd: ChannelCommand,
  deps: { redis: RedisClient; sealer: Sealer; logger: Logger },
): Promise<DeviceCommandReply> {
  const { logger } = deps;
  if (!(await conn.waitForOpen(OPEN_WAIT_MS))) return { ok: false, error: 'not-connected' };
  const sock = conn.socket;
  if (!sock) return { ok: false, error: 'not-connected' };
  try {
    switch (cmd.type) {
      case 'channel-create': {
        const picture = cmd.picture ? await takePicture(deps, cmd) : undefined;
        if (cmd.picture && !picture) return { ok: false, error: 'failed' };
        return { ok: true, data: { channel: await createChannel(sock, cmd.name, cmd.description, picture) } };
      }
      case 'channel-get':
        return { ok: true, data: { channel: await channelMetadata(sock, cmd.key) } };
      case 'channel-update': {
        const picture = cmd.picture === 'set' ? await takePicture(deps, cmd) : undefined;
        if (cmd.picture === 'set' && !picture) return { ok: false, error: 'failed' };
        const chosen = cmd.picture === 'remove' ? null : picture;
        return { ok: true, data: { channel: await updateChannel(sock, cmd.key, cmd.changes, chosen) } };
      }
      case 'channel-delete':
        return { ok: true, data: { channel: await deleteChannel(sock, cmd.key) } };
      case 'channel-follow':
        return { ok: true, data: { channel: await followChannel(sock, cmd.key, cmd.follow) } };
      case 'channel-posts':
        return { ok: true, data: await channelPosts(sock, cmd.key, cmd.count) };
    }
  } catch (err) {
    if (err instanceof PhotoRefusedError) return { ok: false, error: 'bad-picture' };
    const status = err instanceof NotChannelOwnerError ? 403 : whatsappErrorCode(err);
    if (status !== 404 && status !== 403)
      logger.warn('channel request failed', { type: cmd.type, status, err: serializeError(err) });
    return { ok: false, error: status === 404 ? 'not-found' : status === 403 ? 'not-owner' : 'failed' };
  }
}

/** The picture the API left for this command (sealed), taken once; undefined when it expired. */
async function takePicture(
  deps: { redis: RedisClient; sealer: Sealer },
  cmd: ChannelCommand,
): Promise<Buffer | undefined> {
  const key = keys.profilePhoto(cmd.deviceId, cmd.requestId);
  const [[, sealed]] = (await deps.redis.multi().getBuffer(key).del(key).exec()) as [
    [unknown, Buffer | null],
  ];
  return sealed ? deps.sealer.open(sealed, storageContext(key, 'photo')) : undefined;
}
