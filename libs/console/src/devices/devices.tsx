import { api, type Device } from '../kit/api';
import { useConfirmed } from '../kit/action';
import { ago, exact, initials, phone } from '../kit/format';
import { Confirm, NoticeBanner, PolledList, StatusBadge } from '../kit/ui';
import { LiveIndicator, useLiveData } from '../kit/live';
import { LinkPanel } from '../connection/link-panel';
import { STEP_WORDS, reasonWords } from '../connection/passkey-steps';
import { onLink, query } from '../kit/router';
import { useWho } from '../kit/session';
import './devices.css';
import { RowButton, TableHead } from '../kit/table';

/**
 * The list is reloaded when the event stream says a device changed (its status, a message sent or
 * failed, a batch): a device turns connected on this page without a reload, and nothing polls. A
 * burst of events (a batch being sent) is one reload a second at most.
 */
const MIN_RELOAD_GAP_MS = 1000;
/**
 * A pause WhatsApp imposed, its end, and the health score change with no event of their own: the
 * list is reloaded when no event reloaded it for this long.
 */
const STALE_AFTER_MS = 15_000;

const RESTRICTION_LABEL: Record<string, string> = {
  reachout_timelock: 'reach-out lock',
  account_restricted: 'account restricted',
  rate_limited: 'rate limited',
  repeated_failures: 'failures in a row',
};

/** Today's usage against the caps, and the pause while WhatsApp pushes back. */
function SendingCell(props: { device: Device; onResume?: (d: Device) => void }) {
  const s = props.device.sending;
  const onResume = props.onResume;
  if (!s) return <span class="muted">—</span>;
  const r = s.restriction;
  return (
    <div data-testid={`device-sending-${props.device.deviceId}`}>
      <div>
        <span class="strong">{s.sentToday}</span>
        {s.dailyCap !== null && <span class="muted"> / {s.dailyCap}</span>}
        {s.warmupDay !== undefined && <span class="muted small"> · warm-up day {s.warmupDay}</span>}
      </div>
      <div class="muted small">
        first contacts {s.firstContactsToday}
        {s.firstContactCap !== null ? ` / ${s.firstContactCap}` : ''}
      </div>
      {r && (
        <div class="small">
          <span class="badge badge-failed pause-badge" title={exact(r.since)}>
            Paused until <span class="nowrap">{exact(r.until)}</span> (
            {RESTRICTION_LABEL[r.reason] ?? r.reason})
          </span>{' '}
          {onResume && (
            <button
              type="button"
              class="secondary small-button resume-button"
              onClick={() => onResume(props.device)}
            >
              Resume now
            </button>
          )}
        </div>
      )}
    </div>
  );
}

/**
 * The device's `queued` is its queue's count (the quota counter): every message accepted and not
 * yet sent, the scheduled ones included (docs/batches.md, "quota"). The Batches page names those two
 * "Scheduled" and "Queued", so this count is named by both: never "Queued" for a scheduled message.
 */
const WAITING = 'Scheduled + queued';
const WAITING_TITLE = 'Accepted, not yet sent: scheduled messages and queued ones';

/** Below this the alert fires and a pool gives the device nothing (HEALTH_LOW_SCORE). */
const HEALTH_LOW = 50;
const HEALTH_GOOD = 80;

/** The health score as a badge (green, amber, red) and the reasons that cost it points. */
function HealthCell(props: { device: Device }) {
  const h = props.device.health;
  if (!h) return <span class="muted">—</span>;
  const band = h.score >= HEALTH_GOOD ? 'connected' : h.score >= HEALTH_LOW ? 'connecting' : 'failed';
  return (
    <div data-testid={`device-health-${props.device.deviceId}`}>
      <span class={`badge badge-${band} health-badge`} title="Health score (0–100)">
        <span class="strong">{h.score}</span> / 100
      </span>
      {h.reasons.length > 0 && (
        <ul class="health-reasons muted small">
          {h.reasons.map((r) => (
            <li key={r.code}>
              {r.message} <span class="strong">−{r.penalty}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A device's row; without `onDisconnect` and `onResume` (an agent) it only shows. */
function DeviceRow(props: {
  device: Device;
  onDisconnect?: (d: Device) => void;
  onResume?: (d: Device) => void;
}) {
  const onDisconnect = props.onDisconnect;
  const d = props.device;
  const account = d.name || d.phone;
  return (
    <tr data-testid={`device-${d.deviceId}`}>
      <td data-label="Device">
        <div class="device-cell">
          <span class={`avatar avatar-${d.status}`} aria-hidden="true">
            {initials(d.name, d.deviceId)}
          </span>
          <div>
            <div class="strong mono">{d.deviceId}</div>
            {d.engine === 'cloud' && (
              <span
                class="badge engine-badge"
                data-testid={`device-engine-${d.deviceId}`}
                title="A number on WhatsApp’s Cloud API (Meta’s Graph API): no phone linked"
              >
                Cloud API
              </span>
            )}
            {account ? (
              <div class="muted small">
                {d.name}
                {d.name && d.phone ? ' · ' : ''}
                {phone(d.phone)}
              </div>
            ) : (
              <div class="muted small">
                {d.engine === 'cloud' ? 'Not connected' : d.linked ? 'Linked' : 'Not linked'}
              </div>
            )}
          </div>
        </div>
      </td>
      <td data-label="Status">
        <StatusBadge status={d.status} testId={`device-status-${d.deviceId}`} />
        {d.status === 'disconnected' && d.lastDisconnectReason && (
          <div class="muted small">{reasonWords(d.lastDisconnectReason)}</div>
        )}
        {d.status === 'connecting' && d.passkeyStep && (
          <div class="muted small" data-testid={`device-passkey-${d.deviceId}`}>
            {STEP_WORDS[d.passkeyStep]}
          </div>
        )}
      </td>
      <td data-label={WAITING} class="num" title={WAITING_TITLE} data-testid={`device-waiting-${d.deviceId}`}>
        {d.queued}
      </td>
      <td data-label="Sent today">
        <SendingCell device={d} onResume={props.onResume} />
      </td>
      <td data-label="Health">
        <HealthCell device={d} />
      </td>
      <td data-label="Updated" title={exact(d.updatedAt)}>
        {ago(d.updatedAt)}
      </td>
      <td data-label="" class="row-actions">
        {d.profilePic && (
          <a
            href={d.profilePic}
            target="_blank"
            rel="noopener noreferrer"
            class="button-link secondary small-button"
          >
            Picture
          </a>
        )}
        <a
          href={`/dashboard/messages?device=${encodeURIComponent(d.deviceId)}`}
          onClick={onLink}
          class="button-link secondary small-button"
        >
          Messages
        </a>
        <a
          href={`/dashboard/devices/${encodeURIComponent(d.deviceId)}`}
          onClick={onLink}
          class="button-link secondary small-button"
          title={
            d.engine === 'cloud'
              ? "The device's settings, message templates and events"
              : "The device's settings, groups, labels, statuses, channels and events"
          }
        >
          Manage
        </a>
        {onDisconnect && (d.linked || d.status !== 'disconnected') && (
          <RowButton kind="danger-outline" onClick={() => onDisconnect(d)}>
            Disconnect
          </RowButton>
        )}
      </td>
    </tr>
  );
}

export function DevicesPage() {
  const who = useWho();
  const can = who.canChange;
  const devices = useLiveData(() => api<{ devices: Device[] }>('/devices').then((r) => r.devices), {
    minGapMs: MIN_RELOAD_GAP_MS,
    staleAfterMs: STALE_AFTER_MS,
  });
  const { asking: confirming, ask: setConfirming, busy, notice, run } = useConfirmed<Device>();

  const disconnect = (d: Device) =>
    run(
      d.deviceId,
      async () => {
        const res = await api<{ message?: string }>(`/devices/${d.deviceId}/disconnect`, { method: 'POST' });
        void devices.refresh();
        return `${d.deviceId}: ${res.message ?? 'Disconnected'}.`;
      },
      `Could not disconnect ${d.deviceId}`,
    );

  /** Ends a pause now (the operator knows better); a new refusal from WhatsApp pauses it again. */
  const resume = (d: Device) =>
    run(
      d.deviceId,
      async () => {
        await api(`/devices/${d.deviceId}/restriction`, { method: 'DELETE' });
        void devices.refresh();
        return `${d.deviceId}: sending resumed.`;
      },
      `Could not resume ${d.deviceId}`,
    );

  return (
    <>
      <div class="page-head">
        <div class="page-title">
          <h1>Devices</h1>
          <LiveIndicator state={devices.live} />
        </div>
        <p class="muted">WhatsApp accounts linked to this gateway. Status updates live.</p>
      </div>
      {can && (
        <LinkPanel
          onChange={() => void devices.refresh()}
          scoped={!who.operator}
          {...(!who.operator && devices.data ? { known: devices.data.map((d) => d.deviceId) } : {})}
          cloud={(devices.data ?? []).filter((d) => d.engine === 'cloud').map((d) => d.deviceId)}
          {...(query('link') ? { deviceId: query('link') } : {})}
        />
      )}
      <NoticeBanner notice={notice} />
      <section class="card">
        <h2>All devices</h2>
        <PolledList
          poll={devices}
          failure="Could not load devices"
          loading="Loading devices…"
          empty={
            !can
              ? 'No devices yet.'
              : who.operator
                ? 'No devices yet. Link one above with a QR code or a pairing code.'
                : 'No devices yet. Add one on the Workspace page, then link it above.'
          }
        >
          {(list) => (
            <table class="table responsive devices-table">
              <TableHead
                columns={[
                  'Device',
                  'Status',
                  { label: WAITING, class: 'num', title: WAITING_TITLE },
                  'Sent today',
                  'Health',
                  'Updated',
                ]}
                actions
              />
              <tbody>
                {list.map((d) => (
                  <DeviceRow
                    key={d.deviceId}
                    device={d}
                    {...(can
                      ? { onDisconnect: setConfirming, onResume: (dev: Device) => void resume(dev) }
                      : {})}
                  />
                ))}
              </tbody>
            </table>
          )}
        </PolledList>
      </section>
      {confirming && (
        <Confirm
          title={`Disconnect ${confirming.deviceId}?`}
          confirmLabel="Yes, disconnect"
          busy={busy === confirming.deviceId}
          onConfirm={() => void disconnect(confirming)}
          onCancel={() => setConfirming(undefined)}
        >
          {confirming.engine === 'cloud' ? (
            <p>
              Its Cloud API credentials are deleted and its waiting messages fail. Using the number again
              needs the credentials again.
            </p>
          ) : (
            <p>
              The account {confirming.name ? <strong>{confirming.name}</strong> : 'of this device'} is logged
              out and its waiting messages fail. Linking it again needs the phone.
            </p>
          )}
        </Confirm>
      )}
    </>
  );
}
