import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import type {
  ChatUpdatedEventData,
  GroupUpdatedEventData,
  LabelAssociationEventData,
  LabelEditedEventData,
} from '@mgw/contracts';
import type { DeviceSocket } from '@mgw/messenger';
import { ChatIndex, publishEvent, type LabelStore, type Sealer } from '@mgw/store';

export interface GroupLabelEventDeps {
  deviceId: string;
  redis: RedisClient;
  /** Seals the events at rest: a subject or description is the members' text. */
  sealer: Sealer;
  /** The device's labels as GET /labels reads them, written from the same notices, in order. */
  labels: LabelStore;
  metrics: Pick<Metrics, 'labelsNotKept'>;
  logger: Logger;
}

/**
 * A change in one of the account's groups (subject, description, settings, members; by anyone,
 * the account included) becomes a `group.updated` event; a business label edited or put on a chat
 * `label.edited` / `label.association`; a chat archived, pinned or muted `chat.updated` — in the
 * order WhatsApp told them. Each label notice also changes the device's label store (GET /labels)
 * before its event is published, and each chat state the chat's record (the dashboard's chat list).
 * Returns `settled`: a promise for the notices seen so far being kept, which a label command awaits
 * before it answers (Baileys emits the patch's own notice before the patch resolves), so a label
 * the API just created can be renamed or deleted at once.
 */
export function wireGroupAndLabelEvents(
  conn: DeviceSocket,
  deps: GroupLabelEventDeps,
): { settled: () => Promise<void> } {
  const { deviceId, redis, sealer, labels, metrics, logger } = deps;
  const chats = new ChatIndex(redis, sealer);
  let tail = Promise.resolve();
  conn.on('label', (notice) => {
    if (notice.kind === 'chat-state') {
      // A chat's archive, pin or mute: no text. Kept on the chat's record (while the index holds it).
      const { kind: _kind, mutedUntil, ...state } = notice;
      const data: Omit<ChatUpdatedEventData, 'deviceId'> = {
        ...state,
        ...(mutedUntil !== undefined ? { mutedUntil: mutedUntil ? mutedUntil.toISOString() : null } : {}),
      };
      const keep = () =>
        chats
          .setState(deviceId, notice.chat, { ...state, ...(mutedUntil !== undefined ? { mutedUntil } : {}) })
          .then(
            () => undefined,
            (err: unknown) => logger.warn('chat state not kept', { err: serializeError(err) }),
          );
      tail = tail.then(keep).then(() =>
        publishEvent(redis, deviceId, 'chat.updated', data)
          .then(() => undefined)
          .catch((err: unknown) => {
            logger.warn('chat.updated not published', { err: serializeError(err) });
          }),
      );
      return;
    }
    // A label's name is the account's text: sealed at rest like a group's subject.
    const [type, data] =
      notice.kind === 'edited'
        ? (['label.edited', { label: notice.label }] as const)
        : ([
            'label.association',
            { labelId: notice.labelId, chat: notice.chat, labeled: notice.labeled },
          ] as const);
    const checked: Omit<LabelEditedEventData, 'deviceId'> | Omit<LabelAssociationEventData, 'deviceId'> =
      data;
    const keep = () =>
      (notice.kind === 'edited'
        ? labels.edit(deviceId, notice.label)
        : labels.associate(deviceId, notice.labelId, notice.chat, notice.labeled)
      ).then(
        (outcome) => {
          if (outcome === 'kept') return;
          metrics.labelsNotKept.inc({ bound: outcome });
          logger.warn('label change not kept: over its bound', { bound: outcome, type });
        },
        (err: unknown) => logger.warn('label change not kept', { type, err: serializeError(err) }),
      );
    tail = tail.then(keep).then(() =>
      publishEvent(redis, deviceId, type, { ...checked }, { sealer })
        .then(() => undefined)
        .catch((err: unknown) => {
          logger.warn(`${type} not published`, { err: serializeError(err) });
        }),
    );
  });
  conn.on('groupChanges', (notices) => {
    tail = tail.then(async () => {
      for (const notice of notices) {
        const data: Omit<GroupUpdatedEventData, 'deviceId'> = notice;
        await publishEvent(redis, deviceId, 'group.updated', { ...data }, { sealer }).catch((err: unknown) =>
          logger.warn('group.updated not published', {
            change: notice.change.type,
            err: serializeError(err),
          }),
        );
      }
    });
  });
  return { settled: () => tail };
}
