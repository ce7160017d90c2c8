import { useRef, useState } from 'preact/hooks';
import { api, type CampaignList, type CampaignListPage, type HeldReason, type ListState } from '../api';
import { ago, exact } from '../format';
import { Banner, Confirm, Empty, Spinner, usePoll } from '../ui';

const POLL_MS = 5000;
const PAGE = 10;

/**
 * The bar's segments, in the order a message moves; the first four share the chart's colours. Each
 * message of a list counts once, in the status it is in now (a read message is not also counted
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
function barParts(list: CampaignList): Segment[] {
  const { counts } = list;
  return SEGMENTS.flatMap((s): Segment[] => {
    const count = counts[s.key] ?? 0;
    if (s.key !== 'queued') return [{ ...s, count }];
    return [
      { key: 'held', label: 'Held', cls: 'series-held', count: counts.held },
      { ...s, count: count - counts.held },
    ];
  }).filter((p) => p.count > 0);
}

const STATE_LABEL: Record<ListState, string> = {
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
  batch_paused: 'the list’s pause',
  scheduled: 'its send time',
};

type Action = 'pause' | 'resume' | 'cancel';
type Notice = { kind: 'error' | 'success'; text: string } | undefined;

const when = (iso: string) =>
  new Date(iso).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });

/** A list as the admin API sends it: the public record, with the `sendAt` api.ts leaves out. */
type ListRecord = CampaignList & { sendAt?: string };

/** "cancelled 3 min ago": a word for what happened, when (relative; the exact time in the title). */
function Stamp(props: { kind: string; word: string; at: string | undefined }) {
  const { kind, word, at } = props;
  return (
    <span class="muted small list-time" data-testid="list-time" data-kind={kind}>
      {word}{' '}
      <time dateTime={at} title={exact(at)}>
        {ago(at)}
      </time>
    </span>
  );
}

/**
 * What the list's time means, from its record: "scheduled for" while its messages wait for
 * `sendAt`, "cancelled" / "paused" since the control, "sent" once messages left the queue (from
 * `sendAt` when it had one), else "queued" or "held" since it was accepted. Never "sent" for a list
 * that sent nothing: `createdAt` is when the API accepted it, not when it went.
 */
function ListTime(props: { list: ListRecord }) {
  const { state, counts, sendAt, createdAt } = props.list;
  if (state === 'cancelled') return <Stamp kind="cancelled" word="cancelled" at={props.list.cancelledAt} />;
  if (state === 'paused') return <Stamp kind="paused" word="paused" at={props.list.pausedAt} />;
  if (sendAt && (counts.scheduled ?? 0) > 0) {
    return (
      <span class="muted small list-time" data-testid="list-time" data-kind="scheduled">
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
function HeldLine(props: { list: CampaignList }) {
  const { counts, heldReasons = [] } = props.list;
  if (counts.held === 0) return null;
  return (
    <p class="list-held small" data-testid="list-held" data-count={counts.held}>
      <span class="swatch series-held" aria-hidden="true" />
      <strong>{counts.held} held</strong>
      {heldReasons.length > 0 && ' by '}
      {heldReasons.map((h, i) => (
        <span key={h.reason} data-reason={h.reason}>
          {i > 0 && '; '}
          {HELD_LABEL[h.reason] ?? h.reason} until <time title={exact(h.until)}>{when(h.until)}</time> (
          {ago(h.until)})
        </span>
      ))}
    </p>
  );
}

/** The list's messages by status as one bar, and its legend with the numbers. */
function ListBar(props: { list: CampaignList }) {
  const { counts, total } = props.list;
  const shown = SEGMENTS.filter((s) => s.key !== 'scheduled' || counts.scheduled !== undefined);
  const pct = (n: number) => `${(100 * n) / Math.max(total, 1)}%`;
  const done = counts.sent + counts.delivered + counts.read;
  return (
    <>
      <div
        class="bar list-bar"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done + counts.failed}
        aria-label={`${done} of ${total} sent, ${counts.failed} failed`}
      >
        {barParts(props.list).map((p) => (
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
        class="chart-legend list-legend"
        data-testid="list-counts"
        aria-label="Where the list's messages are now, each counted once"
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

/** One list: what happened to it and when, its state, its bar, why some waits, and what can be done to it. */
function ListRow(props: { list: ListRecord; busy: boolean; onAction: (a: Action) => void }) {
  const { list, busy, onAction } = props;
  const live = list.state === 'active' || list.state === 'paused';
  return (
    <li class="list-row" data-testid={`list-${list.batchId}`} data-state={list.state}>
      <div class="list-head">
        <div class="list-title">
          <span class={`badge badge-list-${list.state}`} data-testid="list-state" data-state={list.state}>
            <span class="dot" aria-hidden="true" />
            {STATE_LABEL[list.state] ?? list.state}
          </span>
          <strong data-testid="list-kind">
            {list.broadcast === 'status'
              ? 'Status update'
              : list.broadcast === 'channel'
                ? 'Channel post'
                : `${list.total} message${list.total === 1 ? '' : 's'}`}
          </strong>
          <ListTime list={list} />
          <span class="mono small muted" title={list.batchId}>
            {list.batchId.slice(0, 8)}
          </span>
        </div>
        {live && (
          <div class="list-actions">
            {list.state === 'active' ? (
              <button
                type="button"
                class="secondary small-button"
                disabled={busy}
                onClick={() => onAction('pause')}
              >
                Pause
              </button>
            ) : (
              <button
                type="button"
                class="primary small-button"
                disabled={busy}
                onClick={() => onAction('resume')}
              >
                Resume
              </button>
            )}
            <button
              type="button"
              class="danger-outline small-button"
              disabled={busy}
              onClick={() => onAction('cancel')}
            >
              Cancel…
            </button>
          </div>
        )}
      </div>
      <ListBar list={list} />
      <HeldLine list={list} />
      {list.counts.scheduled !== undefined && list.counts.scheduled > 0 && (
        <p class="small muted" data-testid="list-scheduled" data-count={list.counts.scheduled}>
          {list.counts.scheduled} scheduled: they wait for the list&apos;s send time.
        </p>
      )}
    </li>
  );
}

/**
 * The Campaigns page's card with the device's lists, newest first, PAGE at a time ("Show more"
 * follows the cursor). Every poll reads again the pages shown, so counts and states stay current.
 * Pause, resume and cancel call the admin API (the public list control); cancel asks first.
 */
export function BatchesSection(props: { deviceId: string }) {
  const base = `/devices/${encodeURIComponent(props.deviceId)}/batches`;
  const pages = useRef(1);
  const lists = usePoll(
    async (): Promise<CampaignListPage> => {
      const all: CampaignList[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < pages.current; i++) {
        const q = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const page = await api<{ data: CampaignListPage }>(`${base}?limit=${PAGE}${q}`);
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
  const [cancelling, setCancelling] = useState<CampaignList | undefined>(undefined);

  const control = async (list: CampaignList, action: Action) => {
    setBusy(true);
    setNotice(undefined);
    try {
      await api(`${base}/${encodeURIComponent(list.batchId)}/${action}`, { method: 'POST' });
      const done = { pause: 'paused', resume: 'resumed', cancel: 'cancelled' }[action];
      setNotice({ kind: 'success', text: `List ${list.batchId.slice(0, 8)} ${done}.` });
    } catch (err) {
      setNotice({ kind: 'error', text: (err as Error).message });
    } finally {
      setCancelling(undefined);
      setBusy(false);
      await lists.refresh();
    }
  };
  const onAction = (list: CampaignList, action: Action) =>
    action === 'cancel' ? setCancelling(list) : void control(list, action);
  const more = () => {
    pages.current += 1;
    void lists.refresh();
  };

  const data = lists.data;
  return (
    <section class="card" aria-labelledby="lists-title" data-testid="lists">
      <h2 id="lists-title">Lists</h2>
      <p class="muted small">
        Each list sent by {props.deviceId}, newest first, with where its messages are now (each counted once:
        a read message is under Read only). Pause stops the rest of a list until you resume it (a message
        already handed to WhatsApp may still go); a held message goes by itself when its wait ends.
      </p>
      {notice && <Banner kind={notice.kind}>{notice.text}</Banner>}
      {lists.error && <Banner kind="error">Could not load the lists: {lists.error}</Banner>}
      {!data ? (
        lists.loading && <Spinner label="Loading lists…" />
      ) : data.batches.length === 0 ? (
        <Empty>{props.deviceId} has sent no list yet (a /send to several numbers is one).</Empty>
      ) : (
        <>
          <ul class="lists">
            {data.batches.map((b) => (
              <ListRow key={b.batchId} list={b} busy={busy} onAction={(a) => onAction(b, a)} />
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
          title="Cancel this list?"
          confirmLabel="Cancel the list"
          dismissLabel="Keep it"
          busy={busy}
          onConfirm={() => void control(cancelling, 'cancel')}
          onCancel={() => setCancelling(undefined)}
        >
          <p>
            Every message of this list not yet sent ends failed, with the error &quot;cancelled&quot;:{' '}
            {cancelling.counts.queued + (cancelling.counts.scheduled ?? 0)} of {cancelling.total} now. A
            message already handed to WhatsApp may still go. This cannot be undone.
          </p>
        </Confirm>
      )}
    </section>
  );
}
