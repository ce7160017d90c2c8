import { useState } from 'preact/hooks';
import { api, type Device, type Usage, type Workspace } from '../kit/api';
import { phone } from '../kit/format';
import { navigate, onLink } from '../kit/router';
import { useWho } from '../kit/session';
import { Banner, Empty, Spinner, StatusBadge, usePoll } from '../kit/ui';
import { UsageSection } from './usage-chart';
import { UsersSection } from '../console/workspace-users';
import { QUOTAS, limitText } from './workspace-quotas';
import { utcToday } from './workspaces';
import './workspaces.css';
import { TableHead } from '../kit/table';

const POLL_MS = 15_000;

/** What the workspace uses of each quota now, as far as the console can read it. */
function QuotasSection(props: { workspace: Workspace; devices?: Device[]; today?: number }) {
  const w = props.workspace;
  const queued = props.devices?.reduce((n, d) => n + (d.queued ?? 0), 0);
  const used: Record<string, string> = {
    devices: String(w.devices),
    messagesPerDay: props.today === undefined ? '…' : props.today.toLocaleString('en'),
    queuedMessages: queued === undefined ? '…' : queued.toLocaleString('en'),
    mediaBytes: '—',
  };
  return (
    <section class="card" aria-labelledby="quotas-title" data-testid="quotas">
      <h2 id="quotas-title">Quotas</h2>
      <p class="muted small">
        Set by the operator. Past a quota a request answers 429 and nothing of it is kept.
      </p>
      {/* Three short columns: a plain table at every width (a phone's cards would spread each row out). */}
      <table class="table quotas-table">
        <TableHead
          columns={['Quota', { label: 'Used', class: 'num' }, { label: 'Limit', class: 'num' }]}
          scope
        />
        <tbody>
          {QUOTAS.map((q) => (
            <tr key={q.name} data-testid={`quota-${q.name}`}>
              <th scope="row">
                <div class="strong">{q.label.replace(' (MB)', '')}</div>
                <div class="muted small">{q.hint}</div>
              </th>
              <td class="num">
                {used[q.name]}
                {q.name === 'mediaBytes' && <span class="visually-hidden">not reported here</span>}
              </td>
              <td class="num">{limitText(q.name, w.quotas)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">
        Messages per day counts today (UTC) so far. Media stored is not reported here: the usage’s CSV has the
        bytes stored each day (mediaBytes).
      </p>
    </section>
  );
}

/** The workspace's devices, and a new one (a random id within its device quota) to link. */
function DevicesSection(props: { workspace: Workspace; devices?: Device[]; error?: string }) {
  const { canChange } = useWho();
  const w = props.workspace;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const full = w.quotas.devices !== undefined && w.devices >= w.quotas.devices;
  const add = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await api<{ device?: { deviceId: string }; data?: { deviceId: string }; deviceId?: string }>(
        `/workspaces/${encodeURIComponent(w.id)}/devices`,
        { method: 'POST' },
      );
      const id = r.device?.deviceId ?? r.data?.deviceId ?? r.deviceId;
      if (!id) throw new Error('The gateway did not say which device it made');
      // On to the Devices page, its link panel ready for this device.
      navigate(`/dashboard/devices?link=${encodeURIComponent(id)}`);
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  const list = props.devices ?? [];
  return (
    <section class="card" aria-labelledby="ws-devices-title" data-testid="workspace-devices">
      <div class="card-head">
        <h2 id="ws-devices-title">Devices</h2>
        {canChange && !full && (
          <button type="button" class="primary" disabled={busy} onClick={() => void add()}>
            {busy ? 'Adding…' : 'Add device'}
          </button>
        )}
      </div>
      <p class="muted small">
        {w.devices} {w.devices === 1 ? 'device' : 'devices'}
        {w.quotas.devices !== undefined ? `, at most ${w.quotas.devices}` : ''}.{' '}
        {canChange &&
          (full
            ? 'The quota is reached: the operator can raise it.'
            : 'A new device gets an id of its own; then link it to a phone.')}
      </p>
      {error && <Banner kind="error">{error}</Banner>}
      {props.error && <Banner kind="error">Could not load the devices: {props.error}</Banner>}
      {!props.devices ? (
        !props.error && <Spinner label="Loading devices…" />
      ) : list.length === 0 ? (
        <Empty>No devices yet.</Empty>
      ) : (
        <ul class="ws-device-list">
          {list.map((d) => (
            <li key={d.deviceId} data-testid={`ws-device-${d.deviceId}`}>
              <a class="mono" href={`/dashboard/devices/${encodeURIComponent(d.deviceId)}`} onClick={onLink}>
                {d.deviceId}
              </a>
              <StatusBadge status={d.status} />
              <span class="muted small">
                {d.name || phone(d.phone) || (d.linked ? 'linked' : 'not linked')}
              </span>
              {canChange && !d.linked && d.status === 'disconnected' && (
                <a
                  class="button-link secondary small-button"
                  href={`/dashboard/devices?link=${encodeURIComponent(d.deviceId)}`}
                  onClick={onLink}
                  aria-label={`Link ${d.deviceId}`}
                >
                  Link
                </a>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * A workspace as its people see it (its admin, its agents, or the operator viewing it): its
 * devices (and a new one), its quotas and what is used, its usage of the last 30 days drawn, and
 * its users. An agent sees the devices, the usage and the quotas, read-only, and not the users.
 */
export function WorkspacePage() {
  const who = useWho();
  const id = who.workspace?.id ?? '';
  // A scoped session lists its own workspace only.
  const workspace = usePoll(
    () =>
      api<{ workspaces: Workspace[] }>('/workspaces').then(
        (r) => r.workspaces.find((w) => w.id === id) ?? r.workspaces[0],
      ),
    POLL_MS,
    [id],
  );
  const devices = usePoll(() => api<{ devices: Device[] }>('/devices').then((r) => r.devices), POLL_MS);
  const today = usePoll(
    () =>
      api<{ usage: Usage }>(
        `/workspaces/${encodeURIComponent(id)}/usage?from=${utcToday()}&to=${utcToday()}`,
      ).then((r) => r.usage.total.accepted),
    POLL_MS,
    [id],
  );
  const w = workspace.data;
  return (
    <>
      <div class="page-head">
        <h1>
          <bdi>{w?.name ?? who.workspace?.name ?? id}</bdi>
        </h1>
        <p class="muted">
          Workspace <span class="mono">{id}</span>
          {who.role === 'agent' && ' · you are an agent: you can read everything and answer chats'}
        </p>
      </div>
      {w?.status === 'suspended' && (
        <Banner kind="error">
          This workspace is suspended: its tokens get 403 and its devices hold their messages until the
          operator resumes it.
        </Banner>
      )}
      {workspace.error && <Banner kind="error">Could not load the workspace: {workspace.error}</Banner>}
      {!w ? (
        workspace.loading && <Spinner label="Loading the workspace…" />
      ) : (
        <>
          <DevicesSection workspace={w} devices={devices.data} error={devices.error} />
          <UsageSection workspaceId={w.id} />
          <QuotasSection workspace={w} devices={devices.data} today={today.data} />
          {/* Who may sign in is the admins' to know: an agent's console has no users (the API: 403). */}
          {who.canChange && <UsersSection workspaceId={w.id} />}
        </>
      )}
    </>
  );
}
