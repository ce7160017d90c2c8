import { useState } from 'preact/hooks';
import { api, type Device, type Pool, type PoolDeviceState } from '../kit/api';
import { useConfirmed } from '../kit/action';
import { FormActions, IdNameFields, useSubmit } from '../kit/form';
import { ago, exact } from '../kit/format';
import { useCanChange } from '../kit/session';
import { Banner, Card, Confirm, EditCard, NoticeBanner, PolledList, StatusBadge, usePoll } from '../kit/ui';
import { RowButton, TableHead } from '../kit/table';

/** Device states change while the page is open; pools themselves rarely. */
const POLL_MS = 5000;

/** Ids typed by hand (devices not linked yet), separated by commas or spaces. */
function typedIds(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Create (no `pool`) or edit a pool: its devices are ticked from the known devices; ids of devices
 * not linked yet can be typed (the API accepts them: a device may be linked later).
 */
function PoolForm(props: {
  pool?: Pool;
  known: Device[];
  onSaved: (p: Pool) => void;
  onCancel?: () => void;
}) {
  const editing = props.pool !== undefined;
  const [id, setId] = useState(props.pool?.id ?? '');
  const [name, setName] = useState(props.pool?.name ?? '');
  const [ticked, setTicked] = useState<string[]>(props.pool?.devices ?? []);
  const [other, setOther] = useState('');
  const choices = [
    ...new Set([...props.known.map((d) => d.deviceId), ...(props.pool?.devices ?? [])]),
  ].sort();
  const statusOf = new Map(props.known.map((d) => [d.deviceId, d.status]));
  const toggle = (d: string) => setTicked((t) => (t.includes(d) ? t.filter((x) => x !== d) : [...t, d]));
  const prefix = editing ? `pool-edit` : 'pool-new';

  const { busy, error, onSubmit } = useSubmit(async () => {
    const devices = [...new Set([...ticked, ...typedIds(other)])];
    const r = editing
      ? await api<{ pool: Pool }>(`/pools/${encodeURIComponent(props.pool!.id)}`, {
          method: 'PATCH',
          json: { name: name.trim(), devices },
        })
      : await api<{ pool: Pool }>('/pools', { json: { id: id.trim(), name: name.trim(), devices } });
    setOther('');
    if (!editing) {
      setId('');
      setName('');
      setTicked([]);
    }
    props.onSaved(r.pool);
  });

  return (
    <form onSubmit={onSubmit} aria-label={editing ? `Edit pool ${props.pool!.id}` : 'New pool'}>
      <IdNameFields
        prefix={prefix}
        class="pool-fields"
        noun="Pool"
        editing={editing}
        id={id}
        onId={setId}
        idPlaceholder="shop-senders"
        name={name}
        onName={setName}
        nameMax={64}
        namePlaceholder="Shop senders"
      />
      <fieldset class="checks">
        <legend>Devices ({ticked.length} chosen, 1 to 100)</legend>
        {choices.length === 0 && <span class="muted small">No devices known yet: type their ids below.</span>}
        {choices.map((d) => (
          <label key={d} class="check">
            <input type="checkbox" checked={ticked.includes(d)} onChange={() => toggle(d)} />
            <span class="mono">{d}</span>
            <span class="muted small">{statusOf.get(d) ?? 'not linked'}</span>
          </label>
        ))}
      </fieldset>
      <label for={`${prefix}-other`}>Other device ids (not linked yet; optional)</label>
      <input
        id={`${prefix}-other`}
        autocomplete="off"
        spellcheck={false}
        placeholder="shop-4, shop-5"
        value={other}
        onInput={(e) => setOther((e.target as HTMLInputElement).value)}
      />
      <FormActions
        label={editing ? 'Save pool' : 'Create pool'}
        busy={busy}
        disabled={name.trim() === '' || id.trim() === ''}
        onCancel={props.onCancel}
        error={error}
      />
    </form>
  );
}

/** Why a device takes no share of the pool's batches now (its waiting pooled messages move). */
const DROP_TEXT: Record<Exclude<PoolDeviceState['spread'], 'taking'>, string> = {
  not_linked: 'not linked',
  restricted: 'paused by WhatsApp',
  daily_cap: 'at its daily cap',
  low_health: 'health below the floor',
  no_nct_salt: 'waiting for its first-contact salt',
};

/** A device of a pool: its id, status and health score (the Devices page has the details). */
function PoolDevice(props: { state: PoolDeviceState }) {
  const s = props.state;
  return (
    <li class="pool-device" data-testid={`pool-device-${s.deviceId}`}>
      <span class="mono">{s.deviceId}</span>
      <StatusBadge status={s.status} />
      {s.healthScore !== undefined && <span class="muted small">health {s.healthScore}</span>}
      {!s.linked && s.status === 'disconnected' && <span class="muted small">not linked</span>}
      {s.spread !== 'taking' && (s.linked || s.status !== 'disconnected') && (
        <span class="muted small" data-testid={`pool-device-out-${s.deviceId}`}>
          out of the spread: {DROP_TEXT[s.spread]}
        </span>
      )}
    </li>
  );
}

export function PoolsPage() {
  /** An agent sees the pools; it creates, edits and deletes none. */
  const can = useCanChange();
  const pools = usePoll(() => api<{ pools: Pool[] }>('/pools').then((r) => r.pools), POLL_MS);
  // The devices to tick, polled like the pools: a load that failed says so and is tried again, and
  // a device linked while the page is open appears.
  const devices = usePoll(() => api<{ devices: Device[] }>('/devices').then((r) => r.devices), POLL_MS);
  const known = devices.data ?? [];
  const [editing, setEditing] = useState<Pool | undefined>(undefined);
  const { asking: deleting, ask: setDeleting, busy, notice, setNotice, run } = useConfirmed<Pool>();

  const saved = (verb: string) => (p: Pool) => {
    setNotice({ kind: 'success', text: `Pool “${p.name}” ${verb}.` });
    setEditing(undefined);
    void pools.refresh();
  };

  /** Refused (409) while API tokens send through the pool: the API's text names them. */
  const remove = (p: Pool) =>
    run(
      p.id,
      async () => {
        await api(`/pools/${encodeURIComponent(p.id)}`, { method: 'DELETE' });
        if (editing?.id === p.id) setEditing(undefined);
        void pools.refresh();
        return `Pool “${p.name}” deleted.`;
      },
      `Could not delete “${p.name}”`,
    );

  return (
    <>
      <div class="page-head">
        <h1>Pools</h1>
        <p class="muted">
          Named sets of devices: a batch sent with a token linked to a pool is spread over its devices.
        </p>
      </div>
      {can && (
        <Card id="pool-new-title" title="Create a pool">
          {devices.error && (
            <Banner kind="error">Could not load the devices, trying again: {devices.error}</Banner>
          )}
          <PoolForm known={known} onSaved={saved('created')} />
        </Card>
      )}
      {can && editing && (
        <EditCard prefix="pool" noun="pool" id={editing.id}>
          <PoolForm
            key={editing.id}
            pool={editing}
            known={known}
            onSaved={saved('saved')}
            onCancel={() => setEditing(undefined)}
          />
        </EditCard>
      )}
      <NoticeBanner notice={notice} />
      <Card id="pools-title" title="All pools">
        <PolledList
          poll={pools}
          failure="Could not load pools"
          loading="Loading pools…"
          empty={can ? 'No pools yet. Create one above.' : 'No pools yet.'}
        >
          {(list) => (
            <table class="table responsive">
              <TableHead columns={['Pool', 'Devices', 'Updated']} actions={can} />
              <tbody>
                {list.map((p) => (
                  <tr key={p.id} data-testid={`pool-${p.id}`}>
                    <td data-label="Pool">
                      {/* One block: on a phone's card the name sits over its id, not beside it. */}
                      <div>
                        <div class="strong">{p.name}</div>
                        <div class="muted small mono">{p.id}</div>
                      </div>
                    </td>
                    <td data-label="Devices">
                      <ul class="pool-devices">
                        {p.deviceStates.map((s) => (
                          <PoolDevice key={s.deviceId} state={s} />
                        ))}
                      </ul>
                    </td>
                    <td data-label="Updated" title={exact(p.updatedAt)}>
                      {ago(p.updatedAt)}
                    </td>
                    {can && (
                      <td class="row-actions">
                        <RowButton kind="secondary" onClick={() => setEditing(p)}>
                          Edit
                        </RowButton>
                        <RowButton kind="danger-outline" onClick={() => setDeleting(p)}>
                          Delete
                        </RowButton>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </PolledList>
      </Card>
      {deleting && (
        <Confirm
          title={`Delete pool “${deleting.name}”?`}
          confirmLabel="Yes, delete"
          busy={busy === deleting.id}
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(undefined)}
        >
          <p>
            Its devices stay as they are. A pool that API tokens send through cannot be deleted: revoke them
            first.
          </p>
        </Confirm>
      )}
    </>
  );
}
