import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@mgw/common';
import { keys, type EventType, type SessionStatusEventData } from '@mgw/contracts';
import { storageContext } from '../encryption/families.js';
import { storeScript } from '../lua.js';
import type { Sealer } from '../encryption/sealer.js';

/**
 * Events: the one way anything publishes an event for a device's webhook.
 *
 * An event is appended to the device's outbox stream (`keys.eventOutbox`) by a Lua function that
 * runs inside the same script as the change it reports (the message transition, the session
 * update), so a change and its event are written together or not at all, in the order the
 * changes happened; a crash right after the change cannot lose its event. Events the device's
 * webhook does not subscribe to (or any event while it has none, or it is disabled) are not
 * written to the outbox; every event is written to the device's event log (GET /events). The notifier delivers outbox entries in order per device, retrying from the device's
 * own retry set (`WebhookDeliveries`), no BullMQ queue in between.
 *
 * From TypeScript: {@link publishEvent} (any event) and {@link publishSessionStatus}.
 */

/*
 * Scripts that emit include `lua/includes/event-emit.lua` (`--- @include "event-emit"`):
 * `mgw_emit(hookKey, outboxKey, logKey, channel, deviceId, id, type, timestamp, dataJson, sealed?)`
 * appends one event to the device's event log (`keys.eventLog`, every event: see
 * ./event-log.ts) and to its outbox when the device's webhook wants it; `sealed`: the
 * data was sealed with {@link eventSealContext} (it holds message text), and stays so at rest in
 * both (it is opened for delivery or for GET /events). The outbox is
 * capped (`OUTBOX_MAX_EVENTS`, approximate trim; the include holds its value) so a device whose
 * notifier is away cannot fill Redis.
 */

/** Publishes one event (`lua/event-publish-3.lua`). */
const PUBLISH = storeScript<number>('event-publish-3');

export interface PublishOptions {
  /** The event's `webhook-id` (the receiver's dedupe key); a fresh UUID by default. */
  id?: string;
  /** When it happened; now by default. */
  at?: Date;
  /**
   * Seals `data` at rest (the log and the outbox keep it sealed; it is opened for delivery and
   * GET /events): for events that carry text, such as a group's subject or a contact's status.
   */
  sealer?: Sealer;
}

/**
 * Publishes one event of `deviceId` for its webhook: `data` is the event's `data` (deviceId is
 * added). Resolves true when the webhook wants it (it was written to the outbox); the event log
 * gets it either way. Never put message text or secrets in `data` unless `opts.sealer` seals it.
 */
export async function publishEvent(
  redis: RedisClient,
  deviceId: string,
  type: EventType,
  data: Record<string, unknown>,
  opts: PublishOptions = {},
): Promise<boolean> {
  const at = (opts.at ?? new Date()).toISOString();
  const id = opts.id ?? randomUUID();
  const json = JSON.stringify({ deviceId, ...data });
  const written = await PUBLISH.run(
    redis,
    [keys.webhook(deviceId), keys.eventOutbox(deviceId), keys.eventLog(deviceId)],
    [
      keys.eventsChannel(),
      deviceId,
      id,
      type,
      at,
      opts.sealer ? opts.sealer.sealText(json, eventSealContext(deviceId, id)) : json,
      ...(opts.sealer ? ['1'] : []),
    ],
  );
  return written === 1;
}

/**
 * Publishes a `session.status` event: `status` plus any `extra` fields (e.g. `reason`, `phone`,
 * `name`, or a restriction's `until`). Status changes written through SessionStore publish theirs
 * already; this is for states the session record does not hold (such as a restriction).
 */
export function publishSessionStatus(
  redis: RedisClient,
  deviceId: string,
  status: SessionStatusEventData['status'],
  extra: Omit<SessionStatusEventData, 'deviceId' | 'status'> = {},
  opts: PublishOptions = {},
): Promise<boolean> {
  return publishEvent(redis, deviceId, 'session.status', { status, ...extra }, opts);
}

/** The context an event's sealed data is bound to (its outbox and id). */
export function eventSealContext(deviceId: string, eventId: string): string {
  return storageContext(keys.eventOutbox(deviceId), eventId);
}
