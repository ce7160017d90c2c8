import type { RequestHandler } from 'express';
import {
  batchesQuerySchema,
  emptyQuerySchema,
  type BatchRecord,
  type HeldInfo,
  type HeldReason,
} from '@mgw/contracts';
import { someHeldMessageIds, type BatchAction } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { controlList } from '../control/control-batch.js';
import { parse } from '../http/validation.js';
import { deviceIdOf } from './devices-routes.js';

export type BatchesDeps = Pick<ApiServices, 'redis' | 'messages' | 'batches' | 'acceptor'>;

/** How many of a list's held messages the page reads to say why they wait. */
const HELD_SAMPLE = 5;

/**
 * A list as the Campaigns page shows it: the public record, plus why its held messages wait when
 * some are — the reasons found on a few of them (up to HELD_SAMPLE, read at random), each with the
 * earliest `until` among them. A sample, not a census: a list held for two reasons at once may show one.
 */
export type DashboardBatch = BatchRecord & { heldReasons?: HeldInfo[] };

async function withHeldReasons(
  d: BatchesDeps,
  deviceId: string,
  batch: BatchRecord,
): Promise<DashboardBatch> {
  if (batch.counts.held === 0) return batch;
  const ids = await someHeldMessageIds(d.redis, deviceId, batch.batchId, HELD_SAMPLE);
  const records = await Promise.all(ids.map((id) => d.messages.get(deviceId, id)));
  const byReason = new Map<HeldReason, string>();
  for (const held of records.map((r) => r?.held)) {
    if (!held) continue;
    const seen = byReason.get(held.reason);
    if (!seen || held.until < seen) byReason.set(held.reason, held.until);
  }
  if (byReason.size === 0) return batch;
  const heldReasons = [...byReason].map(([reason, until]) => ({ reason, until }));
  return { ...batch, heldReasons: heldReasons.sort((a, b) => a.until.localeCompare(b.until)) };
}

/**
 * GET /devices/:deviceId/batches?limit=&cursor= — the device's lists, newest first, a page at a
 * time: the public GET /batches (the same store call and query rules), each list with its
 * `heldReasons` when it has held messages.
 */
export function deviceBatchesRoute(d: BatchesDeps): RequestHandler {
  return async (req, res) => {
    const q = parse(batchesQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const page = await d.batches.list(deviceId, q.limit, q.cursor);
    const batches = await Promise.all(page.batches.map((b) => withHeldReasons(d, deviceId, b)));
    res.status(200).json({ success: true, data: { ...page, batches } });
  };
}

/**
 * POST /devices/:deviceId/batches/:batchId/pause | resume | cancel — the public list control for
 * any device (control/control-batch.ts: the same script, sweep, events and errors).
 */
export function controlDeviceBatchRoute(d: BatchesDeps, action: BatchAction): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const batchId = String(req.params.batchId ?? '');
    const batch = await controlList(d, deviceId, batchId, action, req.log);
    res.status(200).json({ success: true, data: batch });
  };
}
