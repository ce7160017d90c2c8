import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { ChannelPost, DeviceSocket, InboundStatus } from '@mgw/messenger';
import { publishEvent, readStatusSettings, type Sealer, type StatusStore } from '@mgw/store';

export interface StatusUpdateDeps {
  deviceId: string;
  redis: RedisClient;
  statuses: StatusStore;
  sealer: Sealer;
  logger: Logger;
}

/**
 * Status updates from the socket: a viewer opening one of ours is kept on the status (once per
 * viewer) with its `status.viewed` event; a contact's status is a `status.received` event — only
 * when the device asked for them (`receiveStatuses`, off by default), its text sealed at rest. A post
 * of a channel the account follows is a `channel.message` event (WhatsApp delivers only those).
 */
export function wireStatusUpdates(conn: DeviceSocket, deps: StatusUpdateDeps): void {
  const { deviceId, logger: log } = deps;
  conn.on('statusViews', (views) => {
    void (async () => {
      for (const view of views) await deps.statuses.recordView(deviceId, view.platformMessageId, view);
    })().catch((err: unknown) => log.warn('status views not recorded', { err: serializeError(err) }));
  });
  conn.on('channelPosts', (posts) => {
    void announcePosts(deps, posts).catch((err: unknown) =>
      log.warn('channel posts not announced', { err: serializeError(err) }),
    );
  });
  conn.on('statuses', (received) => {
    void announce(deps, received).catch((err: unknown) =>
      log.warn('contact statuses not announced', { err: serializeError(err) }),
    );
  });
}

async function announce(deps: StatusUpdateDeps, received: InboundStatus[]): Promise<void> {
  if (!(await readStatusSettings(deps.redis, deps.deviceId)).receiveStatuses) return;
  for (const s of received) {
    const data = {
      platformMessageId: s.platformMessageId,
      contact: s.contact,
      ...(s.text !== undefined ? { text: s.text } : {}),
      ...(s.attachment ? { attachment: s.attachment } : {}),
      ...(s.backgroundColor ? { backgroundColor: s.backgroundColor } : {}),
      postedAt: s.postedAt.toISOString(),
    };
    // A contact's text: sealed at rest in the outbox and the event log, opened for delivery.
    await publishEvent(deps.redis, deps.deviceId, 'status.received', data, { sealer: deps.sealer });
  }
}

async function announcePosts(deps: StatusUpdateDeps, posts: ChannelPost[]): Promise<void> {
  for (const p of posts) {
    const data = {
      channelId: p.channelId,
      platformMessageId: p.platformMessageId,
      ...(p.serverId ? { serverId: p.serverId } : {}),
      ...(p.text !== undefined ? { text: p.text } : {}),
      ...(p.kind ? { kind: p.kind } : {}),
      postedAt: p.postedAt.toISOString(),
    };
    // A post's text: sealed at rest in the outbox and the event log, opened for delivery.
    await publishEvent(deps.redis, deps.deviceId, 'channel.message', data, { sealer: deps.sealer });
  }
}
