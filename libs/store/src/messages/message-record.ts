import { HELD_REASONS, type MessageRecord, type SendJobData } from '@mgw/contracts';

/**
 * A message record's two shapes: the fields it is created with from its job (a queued message has
 * no record: its job is its record until something happens to it), and what the API shows of it.
 */

/** The fields a record is created with, from the message's job (the record is absent while queued). */
export function recordBase(job: SendJobData): Record<string, string> {
  return {
    messageId: job.messageId,
    deviceId: job.deviceId,
    to: job.to,
    kind: job.kind,
    platformMessageId: job.platformMessageId,
    // Names the request's content, which a text or an attachment keeps for the record's life (its
    // text is shown from there: one copy per batch, not per recipient; see ContentStore.shown).
    contentId: job.contentId,
    ...(job.batchId ? { batchId: job.batchId } : {}),
    createdAt: new Date(job.enqueuedAt).toISOString(),
    ...(job.sendAt !== undefined ? { sendAt: new Date(job.sendAt).toISOString() } : {}),
  };
}

const PUBLIC_FIELDS = [
  'messageId',
  'deviceId',
  'to',
  'status',
  'kind',
  'platformMessageId',
  'batchId',
  'createdAt',
  'sendAt',
  'sentAt',
  'deliveredAt',
  'readAt',
  'failedAt',
  'error',
  'direction',
  'deletedAt',
] as const;

const HELD_REASON_SET = new Set<string>(HELD_REASONS);

export function publicRecord(h: Record<string, string>): MessageRecord {
  const out: Record<string, unknown> = {};
  for (const f of PUBLIC_FIELDS) if (h[f] !== undefined) out[f] = h[f];
  out.status ??= 'queued';
  // Never stored: a message waiting in the queue reads `scheduled` until its sendAt.
  if (out.status === 'queued' && h.sendAt && Date.parse(h.sendAt) > Date.now()) out.status = 'scheduled';
  out.direction ??= 'outbound';
  if (out.status === 'scheduled') out.held = { reason: 'scheduled', until: h.sendAt };
  else if (out.status === 'queued' && h.heldReason && HELD_REASON_SET.has(h.heldReason) && h.heldUntil) {
    out.held = { reason: h.heldReason, until: h.heldUntil };
  }
  // Whether its send began (docs/architecture.md, "When a send began"): known once an attempt was
  // claimed; an inbound message has none.
  if (out.direction === 'outbound' && !h.history) {
    if (h.sentAt || h.sendBegan || h.sendingAt) out.sendBegan = true;
    else if (h.unsentAttempts) out.sendBegan = false;
    // Which engine attempted it (docs/cloud-api.md "Records"): the claim keeps a cloud device's
    // (`engine`); a record an attempt reached without one was a linked device's. None before.
    if (out.sendBegan !== undefined) out.engine = h.engine === 'cloud' ? 'cloud' : 'linked';
  }
  // Retry receipts (message-retries.ts): shown once the recipient asked at least once.
  if (h.retriesAsked || h.retriesAnswered) {
    out.retries = {
      asked: Number(h.retriesAsked ?? 0),
      answered: Number(h.retriesAnswered ?? 0),
      ...(h.retryLastAt ? { lastAt: h.retryLastAt } : {}),
      ...(h.undecryptableAt ? { undecryptableAt: h.undecryptableAt } : {}),
    };
  }
  return out as unknown as MessageRecord;
}
