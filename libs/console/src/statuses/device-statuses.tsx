import { useEffect, useRef, useState } from 'preact/hooks';
import { ADMIN_BASE, api, type Message, type MessageStatus } from '../kit/api';
import { useConfirmed } from '../kit/action';
import { ago, exact, phone as plus } from '../kit/format';
import { Banner, Confirm, Empty, NoticeBanner, Spinner, StatusBadge, usePoll } from '../kit/ui';
import { StatusForm } from './status-form';
import './statuses.css';
import { useCanChange } from '../kit/session';
import { RowButton, TableHead } from '../kit/table';

interface Identity {
  phone?: string;
  lid?: string;
}
/** An entry of GET /statuses: one of the account's statuses and who viewed it. */
interface StatusSummary {
  messageId: string;
  status: MessageStatus;
  kind: 'text' | 'image' | 'video' | 'audio';
  audienceSize: number;
  sendAt?: string;
  sentAt?: string;
  expiresAt?: string;
  error?: string;
  views: number;
  viewers: { viewer: Identity; viewedAt: string }[];
}
/** A contact's status as its `status.received` event tells it. */
interface ContactStatus {
  id: string;
  contact: Identity;
  text?: string;
  attachment?: { type: string };
  backgroundColor?: string;
  postedAt: string;
}

type Notice = { kind: 'error' | 'success'; text: string } | undefined;

const who = (i: Identity) => (i.phone ? plus(i.phone) : (i.lid ?? '—'));
const KIND_LABEL: Record<StatusSummary['kind'], string> = {
  text: 'Text',
  image: 'Picture',
  video: 'Video',
  audio: 'Voice',
};

/**
 * The account's statuses (GET /devices/:deviceId/statuses, the public GET /statuses): refreshed
 * every 5 s and at once when a viewer opens one; each row's text is its message's
 * (GET /devices/:deviceId/messages/:id), read once.
 */
function StatusList(props: { deviceId: string; reload: number; viewed: number }) {
  const can = useCanChange();
  const base = `/devices/${encodeURIComponent(props.deviceId)}`;
  const list = usePoll(
    () => api<{ data: { statuses: StatusSummary[] } }>(`${base}/statuses`).then((r) => r.data.statuses),
    5000,
    [base],
  );
  const [texts, setTexts] = useState<Record<string, string>>({});
  const asked = useRef(new Set<string>());
  const { asking: deleting, ask: setDeleting, busy, notice, setNotice, run } = useConfirmed<StatusSummary>();

  useEffect(() => void list.refresh(), [props.reload, props.viewed]);
  useEffect(() => {
    for (const s of list.data ?? []) {
      if (asked.current.has(s.messageId)) continue;
      asked.current.add(s.messageId);
      api<{ message: Message }>(`${base}/messages/${s.messageId}`)
        .then((r) => {
          const t = r.message.text ?? r.message.attachment?.caption ?? '';
          setTexts((old) => ({ ...old, [s.messageId]: t }));
        })
        .catch(() => undefined);
    }
  }, [list.data]);

  const remove = (s: StatusSummary) =>
    run(
      s.messageId,
      async () => {
        const r = await api<{ data: { status: string } }>(`${base}/statuses/${s.messageId}`, {
          method: 'DELETE',
        });
        // Said at once; the dialog closes once the list is read again.
        setNotice({
          kind: 'success',
          text:
            r.data.status === 'deleted'
              ? 'The status left the queue: it is never sent.'
              : 'Deleting: the revoke goes to its viewers through the queue.',
        });
        await list.refresh();
      },
      'Could not delete the status',
    );

  const statuses = list.data;
  return (
    <section class="card" aria-labelledby="status-list-title" data-testid="status-list">
      <h2 id="status-list-title">Your statuses</h2>
      <p class="muted">The last 24 hours and the scheduled ones, newest first, with who viewed each.</p>
      <NoticeBanner notice={notice} />
      {list.error && <Banner kind="error">{list.error}</Banner>}
      {!statuses ? (
        !list.error && <Spinner label="Loading the statuses…" />
      ) : statuses.length === 0 ? (
        <Empty>
          {can
            ? 'No status in the last 24 hours. Post one above: it shows here with its viewers.'
            : 'No status in the last 24 hours.'}
        </Empty>
      ) : (
        <table class="table responsive status-table">
          <TableHead columns={['Status', 'State', 'When', 'Viewers']} actions={can} scope />
          <tbody>
            {statuses.map((s) => (
              <tr key={s.messageId} data-testid={`status-row-${s.messageId}`}>
                <td data-label="Status" class="status-content">
                  <span class="kind-tag">{KIND_LABEL[s.kind]}</span>{' '}
                  <span dir="auto" class="status-text">
                    {texts[s.messageId] || (s.kind === 'text' ? '…' : '')}
                  </span>
                </td>
                <td data-label="State">
                  <StatusBadge status={s.status} />
                  {s.error && <div class="small muted">{s.error}</div>}
                </td>
                <td data-label="When" title={exact(s.sentAt ?? s.sendAt)}>
                  {s.sentAt ? `Sent ${ago(s.sentAt)}` : s.sendAt ? `Due ${exact(s.sendAt)}` : '—'}
                </td>
                <td data-label="Viewers" class="status-viewers">
                  <span data-testid="status-views">
                    {s.views} of {s.audienceSize} viewed
                  </span>
                  {s.viewers.length > 0 && (
                    <ul class="viewers" aria-label="Viewed by">
                      {s.viewers.map((v) => (
                        <li key={v.viewer.phone ?? v.viewer.lid} title={exact(v.viewedAt)}>
                          <span class="mono">{who(v.viewer)}</span>{' '}
                          <span class="muted small">{ago(v.viewedAt)}</span>
                        </li>
                      ))}
                    </ul>
                  )}
                </td>
                {can && (
                  <td class="row-actions">
                    {s.status !== 'deleted' && s.status !== 'failed' && (
                      <RowButton
                        kind="danger-outline"
                        disabled={busy !== undefined}
                        onClick={() => setDeleting(s)}
                      >
                        Delete
                      </RowButton>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deleting && (
        <Confirm
          title="Delete this status?"
          confirmLabel="Delete status"
          busy={busy === deleting.messageId}
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(undefined)}
        >
          {deleting.status === 'queued' || deleting.status === 'scheduled'
            ? 'It has not been sent: it leaves the queue and nobody ever sees it.'
            : `It is taken back from its ${deleting.audienceSize} viewers (a revoke, through the queue).`}
        </Confirm>
      )}
    </section>
  );
}

/**
 * Whether contacts' statuses reach the gateway (GET/PUT /devices/:deviceId/statuses/settings), and
 * those that did: the device's `status.received` events of the event log (its last 24 hours),
 * then live, over the admin event stream.
 */
function ContactStatuses(props: { deviceId: string; received: ContactStatus[] }) {
  const can = useCanChange();
  const path = `/devices/${encodeURIComponent(props.deviceId)}/statuses/settings`;
  const [on, setOn] = useState<boolean | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice>(undefined);
  useEffect(() => {
    api<{ data: { receiveStatuses: boolean } }>(path)
      .then((r) => setOn(r.data.receiveStatuses))
      .catch((err: unknown) => setNotice({ kind: 'error', text: (err as Error).message }));
  }, [path]);
  const toggle = async () => {
    const wanted = !on;
    // Shown at once (a controlled box would snap back until the answer), put back on a refusal.
    setOn(wanted);
    setBusy(true);
    setNotice(undefined);
    try {
      const r = await api<{ data: { receiveStatuses: boolean } }>(path, {
        method: 'PUT',
        json: { receiveStatuses: wanted },
      });
      setOn(r.data.receiveStatuses);
    } catch (err) {
      setOn(!wanted);
      setNotice({ kind: 'error', text: `Could not change the setting: ${(err as Error).message}` });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="contact-statuses-title" data-testid="contact-statuses">
      <h2 id="contact-statuses-title">Contacts' statuses</h2>
      {on !== undefined && !can && (
        <p data-testid="receive-statuses">Receiving contacts' statuses: {on ? 'on' : 'off'}.</p>
      )}
      {on !== undefined && can && (
        <label class="check">
          <input type="checkbox" checked={on} disabled={busy} onChange={() => void toggle()} />
          {/* One flex item: the words wrap as a sentence, not as three columns. */}
          <span>
            Receive contacts' statuses (as <code>status.received</code> events)
          </span>
        </label>
      )}
      <p class="muted small">
        Off by default: a device that only posts does not want every contact's story in its webhook.
      </p>
      <NoticeBanner notice={notice} />
      {props.received.length === 0 ? (
        <Empty>
          {on
            ? 'No contact posted a status in the last 24 hours. New ones appear here as they arrive.'
            : 'Turn on "Receive contacts\' statuses" to see the statuses your contacts post.'}
        </Empty>
      ) : (
        <ul class="contact-statuses">
          {props.received.map((c) => (
            <li key={c.id} data-testid="contact-status">
              <span
                class="swatch"
                aria-hidden="true"
                style={c.backgroundColor ? { background: c.backgroundColor } : undefined}
              />
              <div class="contact-status-body">
                <div>
                  <strong class="mono">{who(c.contact)}</strong>{' '}
                  <span class="muted small" title={exact(c.postedAt)}>
                    {ago(c.postedAt)}
                  </span>
                </div>
                <div dir="auto" class="status-text">
                  {c.attachment && <span class="kind-tag">{c.attachment.type}</span>} {c.text ?? ''}
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * The device's status events over the admin stream: `status.received` from the start of its log
 * (`after=0-0`: the last 24 hours), `status.viewed` to refresh the list at once.
 */
function useStatusEvents(deviceId: string) {
  const [received, setReceived] = useState<ContactStatus[]>([]);
  const [viewed, setViewed] = useState(0);
  useEffect(() => {
    setReceived([]);
    const params = new URLSearchParams({
      device: deviceId,
      types: 'status.received,status.viewed',
      after: '0-0',
    });
    const es = new EventSource(`${ADMIN_BASE}/events/stream?${params.toString()}`, {
      withCredentials: true,
    });
    es.addEventListener('status.received', (m: MessageEvent<string>) => {
      try {
        const e = JSON.parse(m.data) as { id: string; data: Omit<ContactStatus, 'id'> };
        setReceived((old) =>
          old.some((c) => c.id === e.id) ? old : [{ ...e.data, id: e.id }, ...old].slice(0, 200),
        );
      } catch {
        // Not an event of ours.
      }
    });
    es.addEventListener('status.viewed', () => setViewed((n) => n + 1));
    return () => es.close();
  }, [deviceId]);
  return { received, viewed };
}

/** The Statuses tab of a device: post one, the account's own with their viewers, contacts' ones. */
export function StatusesPage(props: { deviceId: string }) {
  const can = useCanChange();
  const [reload, setReload] = useState(0);
  const events = useStatusEvents(props.deviceId);
  return (
    <div class="statuses-page">
      {can && <StatusForm deviceId={props.deviceId} onPosted={() => setReload((n) => n + 1)} />}
      <StatusList deviceId={props.deviceId} reload={reload} viewed={events.viewed} />
      <ContactStatuses deviceId={props.deviceId} received={events.received} />
    </div>
  );
}
