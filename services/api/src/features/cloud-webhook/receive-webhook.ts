import { createHash } from 'node:crypto';
import { parseWebhook, verifySignature, type WebhookEvent } from '@mgw/cloud';
import { CLOUD_WEBHOOK_MAX_AGE_MS, type Metrics } from '@mgw/contracts';
import type { CloudDeviceStore } from '@mgw/store';
import { applyStatus, type StatusDeps } from './apply-status.js';
import { recordMessage, type MessageDeps } from './record-message.js';

/**
 * What became of one delivery: `ok` (its events applied), `bad_signature` (not signed by the app of
 * each number it names), `unknown_number` (it names no number a cloud device is), `replay` (this
 * exact body was taken already), `stale` (every event older than the bound), `malformed` (not
 * Meta's JSON). Only `bad_signature` and `malformed` are refused: Meta retries anything but a 200
 * for days, so what it may resend without anyone's fault is answered 200 and dropped.
 */
export type DeliveryOutcome = 'ok' | 'bad_signature' | 'unknown_number' | 'replay' | 'stale' | 'malformed';

export interface ReceiveDeps {
  devices: Pick<CloudDeviceStore, 'deviceOfNumber' | 'get' | 'firstDelivery' | 'forgetDelivery'>;
  statuses: StatusDeps;
  messages: MessageDeps;
  metrics: Pick<Metrics, 'cloudWebhookDeliveries' | 'cloudWebhookEvents'>;
}

/** Numbers one delivery may name (Meta's name one; a WABA has a few dozen at most). */
export const MAX_NUMBERS_PER_DELIVERY = 50;

/** UTF-8 that refuses what is not (Meta's body is JSON in UTF-8; anything else is not Meta's). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function jsonOf(raw: Buffer): unknown {
  try {
    return JSON.parse(UTF8.decode(raw)) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * One POST of Meta's: the body read as JSON, routed by each change's `metadata.phone_number_id` to
 * its cloud device; the signature checked with the app secret of EACH distinct app among those
 * devices (a body naming the number of another app never passes with one app's secret); a replay
 * of a body taken within the bound changes nothing; then each event not older than the bound is
 * applied to its device. A failure applying them forgets the body, so Meta's retry is taken.
 */
export async function receiveWebhook(
  deps: ReceiveDeps,
  raw: Buffer,
  signature: string | undefined,
  now = Date.now(),
): Promise<DeliveryOutcome> {
  const outcome = await receive(deps, raw, signature, now);
  deps.metrics.cloudWebhookDeliveries.inc({ outcome });
  return outcome;
}

async function receive(
  deps: ReceiveDeps,
  raw: Buffer,
  signature: string | undefined,
  now: number,
): Promise<DeliveryOutcome> {
  const body = jsonOf(raw);
  if (
    typeof body !== 'object' ||
    body === null ||
    (body as { object?: unknown }).object !== 'whatsapp_business_account'
  )
    return 'malformed';
  const { events, phoneNumberIds } = parseWebhook(body);
  // No number: nothing of it can be routed, nor its signature checked (another field of the app's).
  if (phoneNumberIds.length === 0) return 'unknown_number';
  // Each number costs lookups before the signature can be checked: an unsigned body may not ask many.
  if (phoneNumberIds.length > MAX_NUMBERS_PER_DELIVERY) return 'malformed';
  const deviceOf = new Map<string, string>();
  const secrets = new Set<string>();
  for (const phoneNumberId of phoneNumberIds) {
    const deviceId = await deps.devices.deviceOfNumber(phoneNumberId);
    const config = deviceId ? await deps.devices.get(deviceId) : undefined;
    if (!deviceId || !config) continue;
    deviceOf.set(phoneNumberId, deviceId);
    secrets.add(config.appSecret);
  }
  // A number no device is (forgotten meanwhile) does not cost the events of the others their
  // delivery: those are checked and applied, its own are dropped and counted.
  if (deviceOf.size === 0) return 'unknown_number';
  for (const secret of secrets) if (!verifySignature(raw, signature, secret)) return 'bad_signature';
  const digest = createHash('sha256').update(raw).digest('hex');
  if (!(await deps.devices.firstDelivery(digest))) return 'replay';
  try {
    let applied = 0;
    for (const event of events) {
      const deviceId = deviceOf.get(event.phoneNumberId);
      if (!deviceId) {
        deps.metrics.cloudWebhookEvents.inc({ kind: event.kind, outcome: 'unknown_number' });
        continue;
      }
      if (event.timestampMs < now - CLOUD_WEBHOOK_MAX_AGE_MS) {
        deps.metrics.cloudWebhookEvents.inc({ kind: event.kind, outcome: 'stale' });
        continue;
      }
      await apply(deps, deviceId, event, now);
      applied++;
    }
    return events.length > 0 && applied === 0 ? 'stale' : 'ok';
  } catch (err) {
    await deps.devices.forgetDelivery(digest).catch(() => undefined);
    throw err;
  }
}

async function apply(deps: ReceiveDeps, deviceId: string, event: WebhookEvent, now: number): Promise<void> {
  const outcome =
    event.kind === 'status'
      ? await applyStatus(deps.statuses, deviceId, event)
      : await recordMessage(deps.messages, deviceId, event, now);
  deps.metrics.cloudWebhookEvents.inc({ kind: event.kind, outcome });
}
