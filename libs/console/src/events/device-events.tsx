import { useEffect, useState } from 'preact/hooks';
import { api } from '../kit/api';
import { WEBHOOK_EVENTS } from '../kit/events';
import { ago, exact } from '../kit/format';
import { Banner, Empty, Spinner } from '../kit/ui';
import { DeviceOutlets } from '../webhooks/device-outlets';
import { IdLabel } from '../kit/recipient';
import './device-events.css';

interface LoggedEvent {
  cursor: string;
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}
interface RecentPage {
  events: LoggedEvent[];
  olderCursor: string | null;
}

const PAGE = 25;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** Whom an event is about, when it names someone: a recipient, a writer, a chat, a number. */
function whoOf(d: Record<string, unknown>): string | undefined {
  const contact = (d.contact ?? d.viewer) as { phone?: string; lid?: string } | undefined;
  const chat = d.chat as { id?: string } | string | undefined;
  return (
    str(d.to) ??
    str(d.from) ??
    str(contact?.phone) ??
    str(contact?.lid) ??
    (typeof chat === 'string' ? chat : str(chat?.id)) ??
    str(d.phone) ??
    str(d.channelId)
  );
}

/** The event's row in a few words: its message (or batch, call) id, status and whom it names. */
function Summary(props: { e: LoggedEvent }) {
  const d = props.e.data;
  const id = str(d.messageId) ?? str(d.batchId) ?? str(d.callId) ?? str(d.labelId);
  const change = d.change as { type?: string } | undefined;
  const status = str(d.status) ?? str(d.presence) ?? str(change?.type) ?? str(d.reason) ?? str(d.error);
  const who = whoOf(d);
  return (
    <span class="event-summary">
      {status && <span class="tag">{status}</span>}
      {who && <IdLabel id={who} mono />}
      {id && <span class="mono small event-id">{id}</span>}
    </span>
  );
}

function EventRow(props: { e: LoggedEvent }) {
  const { e } = props;
  return (
    <li data-testid="event-row" data-event-id={e.id}>
      <details>
        <summary>
          <time class="event-time" dateTime={e.timestamp} title={exact(e.timestamp)}>
            {ago(e.timestamp)}
          </time>
          <span class="event-type mono">{e.type}</span>
          <Summary e={e} />
        </summary>
        <p class="small muted">
          Event id <span class="mono event-id">{e.id}</span> · {exact(e.timestamp)}
        </p>
        <pre class="event-json" tabIndex={0} aria-label={`Payload of ${e.type}`}>
          {JSON.stringify(e.data, null, 2)}
        </pre>
      </details>
    </li>
  );
}

/** The device's event log, newest first, a page at a time ("Older"), filtered by type. */
function EventLogSection(props: { deviceId: string }) {
  const base = `/devices/${encodeURIComponent(props.deviceId)}`;
  const [type, setType] = useState('');
  const [events, setEvents] = useState<LoggedEvent[] | undefined>(undefined);
  const [older, setOlder] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const page = (before?: string) =>
    api<{ data: RecentPage }>(
      `${base}/events/recent?limit=${PAGE}${type ? `&types=${type}` : ''}${
        before ? `&before=${encodeURIComponent(before)}` : ''
      }`,
    ).then((r) => r.data);
  const load = async (before?: string) => {
    setBusy(true);
    setError(undefined);
    try {
      const p = await page(before);
      setEvents((shown) => (before ? [...(shown ?? []), ...p.events] : p.events));
      setOlder(p.olderCursor);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    setEvents(undefined);
    void load();
  }, [base, type]);

  return (
    <section class="card" aria-labelledby="event-log-title" data-testid="event-log">
      <h2 id="event-log-title">Event log</h2>
      <p class="muted">
        Every event of this device, whether a webhook wants it or not, kept for the log's retention window —
        what <span class="mono">GET /events</span> reads. Open a row for its payload.
      </p>
      <div class="event-toolbar">
        <div>
          <label for="event-type-filter">Type</label>
          <select
            id="event-type-filter"
            value={type}
            onChange={(e) => setType((e.target as HTMLSelectElement).value)}
          >
            <option value="">Every type</option>
            {WEBHOOK_EVENTS.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </div>
        <button type="button" class="secondary" disabled={busy} onClick={() => void load()}>
          Show the newest
        </button>
      </div>
      {error && <Banner kind="error">Could not load the events: {error}</Banner>}
      {!events ? (
        error ? null : (
          <Spinner label="Loading the events…" />
        )
      ) : events.length === 0 ? (
        <Empty>
          {type
            ? `No ${type} event in the log. Choose “Every type” to see the others.`
            : 'No event in the log yet: events appear here as the device sends, receives and connects.'}
        </Empty>
      ) : (
        <>
          <ol class="event-list">
            {events.map((e) => (
              <EventRow key={e.cursor} e={e} />
            ))}
          </ol>
          {older ? (
            <button type="button" class="link" disabled={busy} onClick={() => void load(older)}>
              Older events
            </button>
          ) : (
            <p class="muted small">The oldest event kept is shown.</p>
          )}
        </>
      )}
    </section>
  );
}

/**
 * A device's Events tab: where its events went (the webhook's last delivery and failure, its
 * waiting retries and "Retry now"; the brokers' relays) and its event log.
 */
export function DeviceEventsPage(props: { deviceId: string }) {
  return (
    <div class="device-events">
      <DeviceOutlets deviceId={props.deviceId} />
      <EventLogSection deviceId={props.deviceId} />
    </div>
  );
}
