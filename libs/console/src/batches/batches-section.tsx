import { useRef, useState } from 'preact/hooks';
import { api, type BatchState, type DeviceBatch, type DeviceBatchPage, type HeldReason } from '../kit/api';
import { ago, exact, ownEntry } from '../kit/format';
import { useCanChange } from '../kit/session';
import { Banner, Confirm, Empty, NoticeBanner, Spinner, usePoll } from '../kit/ui';
import { RowButton } from '../kit/table';

const POLL_MS = 5000;
const PAGE = 10;

/**
 * The bar's segments, in the order a message moves; the first four share the chart's colours. Each
 * message of a batch counts once, in the status it is in now (a read message is not also counted
 * sent and delivered), so the words say so — unlike the chart's "Sent in 24 h", which counts every
 * message that reached a status.
 */
const SEGMENTS = [
  { key: 'sent', label: 'Sent, not yet delivered', cls: 'series-sent' },
  { key: 'delivered', label: 'Delivered, not yet read', cls: 'series-delivered' },
  { key: 'read', label: 'Read', cls: 'series-read' },
  { key: 'failed', label: 'Failed', cls: 'series-failed' },
  { key: 'deleted', label: 'Deleted', cls: 'series-deleted' },
  { key: 'scheduled', label: 'Scheduled', cls: 'series-scheduled' },
  { key: 'queued', label: 'Queued', cls: 'series-queued' },
] as const;

type Segment = { key: string; label: string; cls: string; count: number };

/** The bar's parts: the queued part drawn in two, the held ones (striped) and the rest. */
function barParts(batch: DeviceBatch): Segment[] {
  const { counts } = batch;
  return SEGMENTS.flatMap((s): Segment[] => {
    const count = counts[s.key] ?? 0;
    if (s.key !== 'queued') return [{ ...s, count }];
    return [
      { key: 'held', label: 'Held', cls: 'series-held', count: counts.held },
      { ...s, count: count - counts.held },
    ];
  }).filter((p) => p.count > 0);
}

const STATE_LABEL: Record<BatchState, string> = {
  active: 'Active',
  paused: 'Paused',
  cancelled: 'Cancelled',
  completed: 'Completed',
};

const HELD_LABEL: Record<HeldReason, string> = {
  daily_cap: 'the daily cap',
  warmup_cap: 'the warm-up cap',
  first_contact_cap: 'the first-contact cap',
  quiet_hours: 'quiet hours',
  device_paused: 'the device’s pause',
  batch_paused: 'the batch’s pause',
  scheduled: 'its send time',
  device_logged_out: 'the device’s logout (its pool moves them)',
  workspace_suspended: 'the workspace’s suspension',
  device_disconnected: 'the device’s access token (connect it again)',
  pair_rate: 'the pair rate to one contact',
};

type Action = 'pause' | 'resume' | 'cancel';
type Notice = { kind: 'error' | 'success'; text: string } | undefined;

const when = (iso: string) =>
  new Date(iso).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });

/** A batch as the admin API sends it: the public record, with the `sendAt` api.ts leaves out. */
type ShownBatch = DeviceBatch & { sendAt?: string };

/** "cancelled 3 min ago": a word for what happened, when (relative; the exact time in the title). */
function Stamp(props: { kind: string; word: string; at: string | undefined }) {
  const { kind, word, at } = props;
  return (
    <span class="muted small batch-time" data-testid="batch-time" data-kind={kind}>
      {word}{' '}
      <time dateTime={at} title={exact(at)}>
        {ago(at)}
      </time>
    </span>
  );
}

/**
 * What the batch's time means, from its record: "scheduled for" while its messages wait for
 * `sendAt`, "cancelled" / "paused" since the control, "sent" once messages left the queue (from
 * `sendAt` when it had one), else "queued" or "held" since it was accepted. Never "sent" for a batch
 * that sent nothing: `createdAt` is when the API accepted it, not when it went.
 */
function BatchTime(props: { batch: ShownBatch }) {
  const { state, counts, sendAt, createdAt } = props.batch;
  if (state === 'cancelled') return <Stamp kind="cancelled" word="cancelled" at={props.batch.cancelledAt} />;
  if (state === 'paused') return <Stamp kind="paused" word="paused" at={props.batch.pausedAt} />;
  if (sendAt && (counts.scheduled ?? 0) > 0) {
    return (
      <span class="muted small batch-time" data-testid="batch-time" data-kind="scheduled">
        scheduled for{' '}
        <time dateTime={sendAt} title={exact(sendAt)}>
          {when(sendAt)}
        </time>{' '}
        ({ago(sendAt)})
      </span>
    );
  }
  const left = counts.sent + counts.delivered + counts.read + counts.failed + counts.deleted;
  if (state === 'completed' || left > 0) return <Stamp kind="sent" word="sent" at={sendAt ?? createdAt} />;
  const waits = counts.held > 0 ? 'held' : 'queued';
  return <Stamp kind={waits} word={`${waits}, accepted`} at={createdAt} />;
}

/** "3 held by the first-contact cap until Tue 00:00 (in 5 h)" — or just "3 held" when no reason was read. */
function HeldLine(props: { batch: DeviceBatch }) {
  const { counts, heldReasons = [] } = props.batch;
  if (counts.held === 0) return null;
  return (
    <p class="batch-held small" data-testid="batch-held" data-count={counts.held}>
      <span class="swatch series-held" aria-hidden="true" />
      <strong>{counts.held} held</strong>
      {heldReasons.length > 0 && ' by '}
      {heldReasons.map((h, i) => (
        <span key={h.reason} data-reason={h.reason}>
          {i > 0 && '; '}
          {ownEntry(HELD_LABEL, h.reason) ?? h.reason} until{' '}
          <time title={exact(h.until)}>{when(h.until)}</time> ({ago(h.until)})
        </span>
      ))}
    </p>
  );
}

/** The batch's messages by status as one bar, and its legend with the numbers. */
function BatchBar(props: { batch: DeviceBatch }) {
  const { counts, total } = props.batch;
  const shown = SEGMENTS.filter((s) => s.key !== 'scheduled' || counts.scheduled !== undefined);
  const pct = (n: number) => `${(100 * n) / Math.max(total, 1)}%`;
  const done = counts.sent + counts.delivered + counts.read;
  return (
    <>
      <div
        class="bar batch-bar"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done + counts.failed}
        aria-label={`${done} of ${total} sent, ${counts.failed} failed`}
      >
        {barParts(props.batch).map((p) => (
          <span
            key={p.key}
            class={p.cls}
            data-status={p.key}
            style={{ width: pct(p.count) }}
            title={`${p.count} ${p.label.toLowerCase()}`}
          />
        ))}
      </div>
      <ul
        class="chart-legend batch-legend"
        data-testid="batch-counts"
        aria-label="Where the batch's messages are now, each counted once"
      >
        {shown.map((s) => (
          <li key={s.key} data-status={s.key} data-count={counts[s.key] ?? 0}>
            <span class={`swatch ${s.cls}`} aria-hidden="true" />
            {s.label} <strong>{counts[s.key] ?? 0}</strong>
          </li>
        ))}
      </ul>
    </>
  );
}

/** One batch: what happened to it and when, its state, its bar, why some waits, and what can be done to it. */
function BatchRow(props: { batch: ShownBatch; busy: boolean; onAction: (a: Action) => void }) {
  const { batch, busy, onAction } = props;
  // An agent watches batches; it pauses, resumes and cancels none.
  const live = useCanChange() && (batch.state === 'active' || batch.state === 'paused');
  return (
    <li class="batch-row" data-testid={`batch-${batch.batchId}`} data-state={batch.state}>
      <div class="batch-row-head">
        <div class="batch-row-title">
          <span class={`badge badge-batch-${batch.state}`} data-testid="batch-state" data-state={batch.state}>
            <span class="dot" aria-hidden="true" />
            {STATE_LABEL[batch.state] ?? batch.state}
          </span>
          <strong data-testid="batch-kind">
            {batch.broadcast === 'status'
              ? 'Status update'
              : batch.broadcast === 'channel'
                ? 'Channel post'
                : `${batch.total} message${batch.total === 1 ? '' : 's'}`}
          </strong>
          <BatchTime batch={batch} />
          <span class="mono small muted" title={batch.batchId}>
            {batch.batchId.slice(0, 8)}
          </span>
        </div>
        {live && (
          <div class="batch-row-actions">
            {batch.state === 'active' ? (
              <RowButton kind="secondary" disabled={busy} onClick={() => onAction('pause')}>
                Pause
              </RowButton>
            ) : (
              <RowButton kind="primary" disabled={busy} onClick={() => onAction('resume')}>
                Resume
              </RowButton>
            )}
            <RowButton kind="danger-outline" disabled={busy} onClick={() => onAction('cancel')}>
              Cancel…
            </RowButton>
          </div>
        )}
      </div>
      <BatchBar batch={batch} />
      <HeldLine batch={batch} />
      {batch.counts.scheduled !== undefined && batch.counts.scheduled > 0 && (
        <p class="small muted" data-testid="batch-scheduled" data-count={batch.counts.scheduled}>
          {batch.counts.scheduled} scheduled: they wait for the batch&apos;s send time.
        </p>
      )}
    </li>
  );
}

/**
 * The Batches page's card with the device's batches, newest first, PAGE at a time ("Show more"
 * follows the cursor). Every poll reads again the pages shown, so counts and states stay current.
 * Pause, resume and cancel call the admin API (the public batch control); cancel asks first.
 */
export function BatchesSection(props: { deviceId: string }) {
  const base = `/devices/${encodeURIComponent(props.deviceId)}/batches`;
  const pages = useRef(1);
  const batches = usePoll(
    async (): Promise<DeviceBatchPage> => {
      const all: DeviceBatch[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < pages.current; i++) {
        const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const page = await api<{ data: DeviceBatchPage }>(`${base}?limit=${PAGE}${q}`);
        all.push(...page.data.batches);
        cursor = page.data.nextCursor;
        if (!cursor) break;
      }
      return { batches: all, ...(cursor ? { nextCursor: cursor } : {}) };
    },
    POLL_MS,
    [base],
  );
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);
  const [cancelling, setCancelling] = useState<DeviceBatch | undefined>(undefined);

  const control = async (batch: DeviceBatch, action: Action) => {
    setBusy(true);
    setNotice(undefined);
    try {
      await api(`${base}/${encodeURIComponent(batch.batchId)}/${action}`, { method: 'POST' });
      const done = { pause: 'paused', resume: 'resumed', cancel: 'cancelled' }[action];
      setNotice({ kind: 'success', text: `Batch ${batch.batchId.slice(0, 8)} ${done}.` });
    } catch (err) {
      setNotice({ kind: 'error', text: (err as Error).message });
    } finally {
      setCancelling(undefined);
      setBusy(false);
      await batches.refresh();
    }
  };
  const onAction = (batch: DeviceBatch, action: Action) =>
    action === 'cancel' ? setCancelling(batch) : void control(batch, action);
  const more = () => {
    pages.current += 1;
    void batches.refresh();
  };

  const data = batches.data;
  return (
    <section class="card" aria-labelledby="batches-title" data-testid="batches">
      <h2 id="batches-title">Batches</h2>
      <p class="muted small">
        Each batch sent by {props.deviceId} (one send to several numbers), newest first, with where its
        messages are now (each counted once: a read message is under Read only). Pause stops the rest of a
        batch until you resume it (a message already handed to WhatsApp may still go); a held message goes by
        itself when its wait ends.
      </p>
      <NoticeBanner notice={notice} />
      {batches.error && <Banner kind="error">Could not load the batches: {batches.error}</Banner>}
      {!data ? (
        batches.loading && <Spinner label="Loading batches…" />
      ) : data.batches.length === 0 ? (
        <Empty>{props.deviceId} has sent no batch yet (a /send to several numbers is one).</Empty>
      ) : (
        <>
          <ul class="batch-rows">
            {data.batches.map((b) => (
              <BatchRow key={b.batchId} batch={b} busy={busy} onAction={(a) => onAction(b, a)} />
            ))}
          </ul>
          {data.nextCursor && (
            <button type="button" class="secondary show-more" onClick={more}>
              Show more
            </button>
          )}
        </>
      )}
      {cancelling && (
        <Confirm
          title="Cancel this batch?"
          confirmLabel="Cancel the batch"
          dismissLabel="Keep it"
          busy={busy}
          onConfirm={() => void control(cancelling, 'cancel')}
          onCancel={() => setCancelling(undefined)}
        >
          <p>
            Every message of this batch not yet sent ends failed, with the error &quot;cancelled&quot;:{' '}
            {cancelling.counts.queued + (cancelling.counts.scheduled ?? 0)} of {cancelling.total} now. A
            message already handed to WhatsApp may still go. This cannot be undone.
          </p>
        </Confirm>
      )}
    </section>
  );
}
