import { useEffect, useState } from 'preact/hooks';
import { api, type QuotaName, type Usage, type UsageDay, type Workspace } from '../kit/api';
import { useConfirmed } from '../kit/action';
import { FormActions, ID_RULE, IdNameFields, useSubmit } from '../kit/form';
import { ago, exact } from '../kit/format';
import { useWho } from '../kit/session';
import { Card, Confirm, EditCard, NoticeBanner, PolledList, usePoll } from '../kit/ui';
import { QuotaFields, limitText, quotaText, quotasOf } from './workspace-quotas';
import './workspaces.css';
import { RowButton, TableHead } from '../kit/table';

/** Workspaces change rarely; their usage of today a little more. */
const POLL_MS = 15_000;

const EMPTY_QUOTAS = quotaText({});
/** Today in UTC, the day usage is counted in. */
export const utcToday = () => new Date().toISOString().slice(0, 10);

/** Create (no `workspace`) or edit one: its name and quotas (its id is for good). */
function WorkspaceForm(props: {
  workspace?: Workspace;
  onSaved: (w: Workspace) => void;
  onCancel?: () => void;
}) {
  const editing = props.workspace !== undefined;
  const prefix = editing ? 'ws-edit' : 'ws-new';
  const [id, setId] = useState(props.workspace?.id ?? '');
  const [name, setName] = useState(props.workspace?.name ?? '');
  const [quotas, setQuotas] = useState(props.workspace ? quotaText(props.workspace.quotas) : EMPTY_QUOTAS);
  const [invalid, setInvalid] = useState<QuotaName[]>([]);
  const typed = () => quotasOf(quotas, editing ? 'null' : 'absent');

  const check = () => {
    const bad = typed().invalid;
    setInvalid(bad);
    return bad.length > 0
      ? 'A quota is a whole number of 0 or more (media: MB), or empty for no limit.'
      : undefined;
  };
  const { busy, error, onSubmit } = useSubmit(
    async () => {
      const json = { name: name.trim(), quotas: typed().quotas };
      const r = editing
        ? await api<{ workspace: Workspace }>(`/workspaces/${encodeURIComponent(props.workspace!.id)}`, {
            method: 'PATCH',
            json,
          })
        : await api<{ workspace: Workspace }>('/workspaces', { json: { id: id.trim(), ...json } });
      if (!editing) {
        setId('');
        setName('');
        setQuotas(EMPTY_QUOTAS);
      }
      props.onSaved(r.workspace);
    },
    { check },
  );

  return (
    <form
      onSubmit={onSubmit}
      aria-label={editing ? `Edit workspace ${props.workspace!.id}` : 'New workspace'}
    >
      <IdNameFields
        prefix={prefix}
        class="ws-fields"
        noun="Workspace"
        editing={editing}
        id={id}
        onId={setId}
        idPlaceholder="acme"
        hint={editing ? 'An id is for good.' : `${ID_RULE}.`}
        name={name}
        onName={setName}
        nameMax={100}
        namePlaceholder="Acme Ltd"
      />
      <QuotaFields
        prefix={prefix}
        text={quotas}
        invalid={invalid}
        onChange={(q, v) => setQuotas((was) => ({ ...was, [q]: v }))}
      />
      <FormActions
        label={editing ? 'Save workspace' : 'Create workspace'}
        busy={busy}
        disabled={name.trim() === '' || id.trim() === ''}
        onCancel={props.onCancel}
        error={error}
      />
    </form>
  );
}

/** Today's figures of a workspace (UTC), or a dash while they load or when they cannot be read. */
function TodayCell(props: { today?: UsageDay | null }) {
  const t = props.today;
  if (t === undefined) return <span class="muted">…</span>;
  if (t === null) return <span class="muted">—</span>;
  return (
    <div>
      <div>
        <span class="strong">{t.accepted}</span> accepted
      </div>
      <div class="muted small">
        {t.sent} sent · {t.delivered} delivered · {t.failed} failed
      </div>
    </div>
  );
}

export function WorkspacesPage() {
  const who = useWho();
  const list = usePoll(
    () => api<{ workspaces: Workspace[] }>('/workspaces').then((r) => r.workspaces),
    POLL_MS,
  );
  /** Today's usage by workspace id (null: could not be read). */
  const [today, setToday] = useState<Record<string, UsageDay | null>>({});
  const [editing, setEditing] = useState<Workspace | undefined>(undefined);
  const { asking: suspending, ask: setSuspending, busy, notice, setNotice, run } = useConfirmed<Workspace>();

  const ids = (list.data ?? []).map((w) => w.id).join(',');
  useEffect(() => {
    let stale = false;
    const day = utcToday();
    for (const w of list.data ?? []) {
      api<{ usage: Usage }>(`/workspaces/${encodeURIComponent(w.id)}/usage?from=${day}&to=${day}`)
        .then((r) => !stale && setToday((t) => ({ ...t, [w.id]: r.usage.days.at(-1) ?? null })))
        .catch(() => !stale && setToday((t) => ({ ...t, [w.id]: null })));
    }
    return () => {
      stale = true;
    };
  }, [ids, list.data]);

  const saved = (verb: string) => (w: Workspace) => {
    setNotice({ kind: 'success', text: `Workspace “${w.name}” ${verb}.` });
    setEditing(undefined);
    void list.refresh();
  };

  const setStatus = (w: Workspace, status: Workspace['status']) =>
    run(
      w.id,
      async () => {
        await api(`/workspaces/${encodeURIComponent(w.id)}`, { method: 'PATCH', json: { status } });
        void list.refresh();
        return status === 'suspended'
          ? `Workspace “${w.name}” suspended: its tokens get 403 and its devices hold their messages.`
          : `Workspace “${w.name}” resumed: its held messages go out within 30 s.`;
      },
      `Could not change “${w.name}”`,
    );

  /** The operator sees the workspace as its admin does: the whole console scoped to it. */
  const openAs = (w: Workspace) =>
    run(
      w.id,
      async () => {
        await api('/session/workspace', { method: 'PUT', json: { workspaceId: w.id } });
        // The console then shows the workspace's home: this page is gone.
        await who.reload('/dashboard/workspace');
      },
      `Could not open “${w.name}”`,
    );

  return (
    <>
      <div class="page-head">
        <h1>Workspaces</h1>
        <p class="muted">
          Your customers: each owns its devices, tokens and pools, within its quotas. Open one to see and
          manage it as its admin does.
        </p>
      </div>
      <Card id="ws-new-title" title="Create a workspace">
        <WorkspaceForm onSaved={saved('created')} />
      </Card>
      {editing && (
        <EditCard prefix="ws" noun="workspace" id={editing.id}>
          <WorkspaceForm
            key={editing.id}
            workspace={editing}
            onSaved={saved('saved')}
            onCancel={() => setEditing(undefined)}
          />
        </EditCard>
      )}
      <NoticeBanner notice={notice} />
      <Card id="ws-list-title" title="All workspaces">
        <PolledList
          poll={list}
          failure="Could not load workspaces"
          loading="Loading workspaces…"
          empty="No workspaces yet. Create one above."
        >
          {(rows) => (
            <table class="table responsive workspaces-table">
              <TableHead
                columns={[
                  'Workspace',
                  'Status',
                  { label: 'Devices', class: 'num' },
                  'Today (UTC)',
                  'Updated',
                ]}
                actions
              />
              <tbody>
                {rows.map((w) => (
                  <tr key={w.id} data-testid={`workspace-${w.id}`}>
                    <td data-label="Workspace">
                      <div>
                        <div class="strong">
                          <bdi>{w.name}</bdi>
                        </div>
                        <div class="muted small mono">{w.id}</div>
                      </div>
                    </td>
                    <td data-label="Status">
                      <span class={`badge ${w.status === 'active' ? 'badge-connected' : 'badge-failed'}`}>
                        <span class="dot" aria-hidden="true" />
                        {w.status === 'active' ? 'Active' : 'Suspended'}
                      </span>
                    </td>
                    <td data-label="Devices" class="num" data-testid={`workspace-devices-${w.id}`}>
                      {/* One item: on a phone's card the count and its quota stay together. */}
                      <span>
                        {w.devices}
                        <span class="muted small"> / {limitText('devices', w.quotas)}</span>
                      </span>
                    </td>
                    <td data-label="Today (UTC)" data-testid={`workspace-today-${w.id}`}>
                      <TodayCell today={today[w.id]} />
                    </td>
                    <td data-label="Updated" title={exact(w.updatedAt)}>
                      {ago(w.updatedAt)}
                    </td>
                    <td class="row-actions">
                      <RowButton
                        kind="primary"
                        disabled={busy === w.id}
                        label={`Open ${w.name} as its admin`}
                        onClick={() => void openAs(w)}
                      >
                        Open as admin
                      </RowButton>
                      <RowButton kind="secondary" label={`Edit ${w.name}`} onClick={() => setEditing(w)}>
                        Edit
                      </RowButton>
                      {/* Default is the operator's own devices: suspending it would stop them all. */}
                      {w.status === 'active' && w.id !== 'default' && (
                        <RowButton
                          kind="danger-outline"
                          disabled={busy === w.id}
                          label={`Suspend ${w.name}`}
                          onClick={() => setSuspending(w)}
                        >
                          Suspend
                        </RowButton>
                      )}
                      {w.status === 'suspended' && (
                        <RowButton
                          kind="secondary"
                          disabled={busy === w.id}
                          label={`Resume ${w.name}`}
                          onClick={() => void setStatus(w, 'active')}
                        >
                          Resume
                        </RowButton>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </PolledList>
      </Card>
      {suspending && (
        <Confirm
          title={`Suspend “${suspending.name}”?`}
          confirmLabel="Yes, suspend"
          busy={busy === suspending.id}
          onConfirm={() => void setStatus(suspending, 'suspended')}
          onCancel={() => setSuspending(undefined)}
        >
          <p>
            Its API tokens get 403 at once and its devices stop sending, keeping their queues. Resume it to
            let the held messages go.
          </p>
        </Confirm>
      )}
    </>
  );
}
