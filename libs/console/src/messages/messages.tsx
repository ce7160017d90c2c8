import { useEffect, useState } from 'preact/hooks';
import { api, type Batch, type Device, type Message } from '../kit/api';
import { ago, exact, idKind } from '../kit/format';
import { navigate, query } from '../kit/router';
import { Banner, Card, Empty, Spinner, StatusBadge } from '../kit/ui';
import { LiveIndicator, useLiveData, type LiveEvent } from '../kit/live';
import { MessageContent } from './message-content';
import { Recipient } from '../kit/recipient';
import { TableHead } from '../kit/table';

/** The events that change what this page lists: its messages and its batches. */
const affectsMessages = (e: LiveEvent) =>
  e.type.startsWith('message.') || e.type.startsWith('batch.') || e.type === 'poll.vote';

/** What a batch is, by where its messages went: a status update and a channel post are batches of one. */
function batchKindOf(m: Message | undefined): string {
  const where = idKind(m?.to ?? '');
  if (where === 'status') return 'Status update';
  if (where === 'channel') return 'Channel post';
  return 'Message batch';
}

/** A batch's words, from one of its messages: its text, else its attachment's caption or file name. */
function batchTextOf(m: Message | undefined): string | undefined {
  const a = m?.attachment;
  return m?.text ?? a?.caption ?? a?.fileName ?? (a ? `${a.type} attachment` : undefined);
}

/**
 * A batch's progress among the recent messages (`GET /batches/:id` replaces it once it exists):
 * what it is (a message batch, a status update, a channel post), its text and when it was made,
 * read from its messages on the page (each batch listed has some).
 */
function BatchProgress(props: { batch: Batch; messages: Message[] }) {
  const { counts, total, batchId } = props.batch;
  const first = props.messages[0];
  const made = props.messages.map((m) => m.createdAt).sort()[0];
  const kind = batchKindOf(first);
  const text = batchTextOf(first);
  const done = counts.sent + counts.delivered + counts.read;
  const pct = (n: number) => `${(100 * n) / Math.max(total, 1)}%`;
  return (
    <li class="batch" data-testid={`batch-${batchId}`}>
      <div class="batch-head">
        <div class="batch-title">
          <span class="batch-kind">{kind}</span>
          {text && (
            <bdi class="batch-text" dir="auto" title={text}>
              {text}
            </bdi>
          )}
        </div>
        <span class="small batch-done">
          {done} of {total} sent{counts.failed > 0 ? `, ${counts.failed} failed` : ''}
          {counts.read > 0 ? `, ${counts.read} read` : ''}
        </span>
      </div>
      <div class="batch-meta muted small">
        <span class="mono" title={batchId}>
          {batchId.slice(0, 8)}
        </span>
        {kind === 'Message batch' && (
          <span>
            {total} recipient{total === 1 ? '' : 's'}
          </span>
        )}
        {made && (
          <span>
            made{' '}
            <time dateTime={made} title={exact(made)}>
              {ago(made)}
            </time>
          </span>
        )}
      </div>
      <div
        class="bar"
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
        aria-label={`Progress of the ${kind.toLowerCase()} ${batchId.slice(0, 8)}`}
      >
        <span class="bar-done" style={{ width: pct(done) }} />
        <span class="bar-failed" style={{ width: pct(counts.failed) }} />
      </div>
    </li>
  );
}

/** Which messages the page lists (`?direction=`, as the admin API's filter). */
type Direction = 'all' | 'outbound' | 'inbound';
const DIRECTION_LABEL: Record<Direction, string> = {
  all: 'All',
  outbound: 'Outgoing (sent by the device)',
  inbound: 'Incoming (written by contacts)',
};

/**
 * The Kind column: an OTP; a status update (POST /statuses) or a channel post (POST
 * /channels/:id/posts), each a batch of one inside, so named by where it went; a batch's message; or
 * a message.
 */
function kindOf(m: Message): string {
  if (m.kind === 'otp') return 'OTP';
  const where = idKind(m.to ?? '');
  if (where === 'status') return 'Status';
  if (where === 'channel') return 'Channel post';
  return m.batchId ? 'Batch' : 'Message';
}

function MessageRow(props: { m: Message }) {
  const m = props.m;
  const inbound = m.direction === 'inbound';
  const last = m.deletedAt ?? m.readAt ?? m.deliveredAt ?? m.sentAt ?? m.failedAt;
  return (
    <tr data-testid={`message-${m.messageId}`} data-direction={inbound ? 'inbound' : 'outbound'}>
      <td data-label="Direction">
        <span class={`direction direction-${inbound ? 'inbound' : 'outbound'}`}>
          {inbound ? '↓ Incoming' : '↑ Outgoing'}
        </span>
      </td>
      <td data-label={inbound ? 'From' : 'To'}>
        <Recipient m={m} />
      </td>
      <td data-label="Status">
        <StatusBadge status={m.status} />
        {m.error && <div class="muted small">{m.error.replace(/_/g, ' ')}</div>}
      </td>
      <td data-label="Kind">{kindOf(m)}</td>
      <td data-label="Content">
        <MessageContent m={m} />
      </td>
      <td data-label={inbound ? 'Received' : 'Accepted'} title={exact(m.createdAt)}>
        {ago(m.createdAt)}
      </td>
      <td data-label="Last change" title={exact(last)}>
        {last ? ago(last) : '—'}
      </td>
      <td data-label="ID">
        <span class="msg-id mono small truncate" title={m.messageId}>
          {m.messageId}
        </span>
      </td>
    </tr>
  );
}

export function MessagesPage() {
  const [devices, setDevices] = useState<Device[] | undefined>(undefined);
  const deviceId = query('device') ?? devices?.[0]?.deviceId ?? '';
  const asked = query('direction');
  const direction: Direction = asked === 'inbound' || asked === 'outbound' ? asked : 'all';
  // Loaded once, then again when the device's event stream says a message or a batch changed.
  const recent = useLiveData(
    () =>
      deviceId
        ? api<{ messages: Message[]; batches: Batch[] }>(
            `/devices/${encodeURIComponent(deviceId)}/messages?limit=100&direction=${direction}`,
          )
        : Promise.resolve({ messages: [], batches: [] }),
    // No stream until the page knows its device (the first of the list, unless the URL names one).
    { ...(deviceId ? { device: deviceId } : { off: true }), affects: affectsMessages },
    [deviceId, direction],
  );
  const show = (device: string, dir: Direction) =>
    navigate(
      `/dashboard/messages?device=${encodeURIComponent(device)}${dir === 'all' ? '' : `&direction=${dir}`}`,
    );
  const [lookup, setLookup] = useState('');
  const [found, setFound] = useState<{ message?: Message; error?: string } | undefined>(undefined);

  useEffect(() => {
    api<{ devices: Device[] }>('/devices')
      .then((r) => setDevices(r.devices))
      .catch(() => setDevices([]));
  }, []);

  const find = async (e: Event) => {
    e.preventDefault();
    try {
      const res = await api<{ message: Message }>(
        `/devices/${encodeURIComponent(deviceId)}/messages/${encodeURIComponent(lookup.trim())}`,
      );
      setFound({ message: res.message });
    } catch (err) {
      setFound({ error: (err as Error).message });
    }
  };

  const messages = recent.data?.messages ?? [];
  const batches = recent.data?.batches ?? [];
  return (
    <>
      <div class="page-head">
        <div class="page-title">
          <h1>Messages</h1>
          {deviceId && <LiveIndicator state={recent.live} />}
        </div>
        <p class="muted">
          Recent messages of a device, newest first: those it sends (waiting, sent in the last hour, failed)
          and those contacts wrote to it. Older ones are found by id.
        </p>
      </div>
      <section class="card toolbar messages-toolbar">
        <div>
          <label for="messages-device">Device</label>
          <select
            id="messages-device"
            value={deviceId}
            onChange={(e) => show((e.target as HTMLSelectElement).value, direction)}
          >
            {(devices ?? []).map((d) => (
              <option key={d.deviceId} value={d.deviceId}>
                {d.deviceId}
                {d.name ? ` — ${d.name}` : ''}
              </option>
            ))}
            {deviceId && !(devices ?? []).some((d) => d.deviceId === deviceId) && (
              <option value={deviceId}>{deviceId}</option>
            )}
          </select>
        </div>
        <div>
          <label for="messages-direction">Direction</label>
          <select
            id="messages-direction"
            value={direction}
            onChange={(e) => show(deviceId, (e.target as HTMLSelectElement).value as Direction)}
          >
            {(Object.keys(DIRECTION_LABEL) as Direction[]).map((d) => (
              <option key={d} value={d}>
                {DIRECTION_LABEL[d]}
              </option>
            ))}
          </select>
        </div>
        <form class="lookup" onSubmit={find}>
          <label for="message-id">Find a message by ID</label>
          <div class="inline">
            <input
              id="message-id"
              value={lookup}
              spellcheck={false}
              onInput={(e) => setLookup((e.target as HTMLInputElement).value)}
            />
            <button type="submit" class="secondary" disabled={!deviceId || lookup.trim() === ''}>
              Find
            </button>
          </div>
        </form>
      </section>
      {found?.error && <Banner kind="error">{found.error}</Banner>}
      {found?.message && (
        <section class="card">
          <h2>Message {found.message.messageId}</h2>
          <table class="table responsive">
            <tbody>
              <MessageRow m={found.message} />
            </tbody>
          </table>
        </section>
      )}
      {batches.length > 0 && (
        <Card id="batches-title" title="Batches">
          <ul class="batches">
            {batches.map((b) => (
              <BatchProgress
                key={b.batchId}
                batch={b}
                messages={messages.filter((m) => m.batchId === b.batchId)}
              />
            ))}
          </ul>
        </Card>
      )}
      <section class="card">
        <h2>Recent messages{deviceId ? ` of ${deviceId}` : ''}</h2>
        {recent.error && <Banner kind="error">Could not load messages: {recent.error}</Banner>}
        {devices === undefined || (recent.loading && !recent.data) ? (
          <Spinner label="Loading messages…" />
        ) : !deviceId ? (
          <Empty>No devices yet: link one on the Devices page.</Empty>
        ) : messages.length === 0 ? (
          <Empty>
            No recent {direction === 'all' ? '' : `${direction === 'inbound' ? 'incoming' : 'outgoing'} `}
            messages for {deviceId}.
          </Empty>
        ) : (
          // Wider than its card only in a narrow window: then it scrolls, and a keyboard reaches it.
          <div class="table-scroll" tabIndex={0} role="region" aria-label="Recent messages">
            <table class="table responsive">
              <TableHead
                columns={[
                  'Direction',
                  'To / from',
                  'Status',
                  'Kind',
                  'Content',
                  'Accepted / received',
                  'Last change',
                  'ID',
                ]}
              />
              <tbody>
                {messages.map((m) => (
                  <MessageRow key={m.messageId} m={m} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
