import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../kit/action';
import { api } from '../kit/api';
import { useLiveData, type LiveEvent } from '../kit/live';
import { onLink } from '../kit/router';
import { Banner, Confirm, Empty, Modal, NoticeBanner, Spinner } from '../kit/ui';
import { IdLabel } from '../kit/recipient';
import './labels.css';
import { useCanChange } from '../kit/session';
import { RowButton, TableHead } from '../kit/table';

/** A label of the admin API's GET /devices/:deviceId/labels (the public GET /labels's). */
export interface Label {
  id: string;
  name: string;
  color: number;
  predefinedId?: string;
  /** How many chats carry it. */
  chats: number;
}

/**
 * WhatsApp's 20 label colours (0–19), each with the name the page says beside its swatch (a colour
 * is never told by its hue alone).
 */
export const LABEL_COLORS: readonly { name: string; hex: string }[] = [
  { name: 'Salmon', hex: '#ff9485' },
  { name: 'Sky blue', hex: '#64c4ff' },
  { name: 'Yellow', hex: '#ffd429' },
  { name: 'Lilac', hex: '#dfaef0' },
  { name: 'Slate', hex: '#99b6c1' },
  { name: 'Sea green', hex: '#55ccb3' },
  { name: 'Pink', hex: '#ff9dff' },
  { name: 'Mustard', hex: '#d3a91d' },
  { name: 'Violet', hex: '#6d7cce' },
  { name: 'Lime', hex: '#d7e752' },
  { name: 'Cyan', hex: '#00d0e2' },
  { name: 'Blush', hex: '#ffc5c7' },
  { name: 'Teal', hex: '#93ceac' },
  { name: 'Rose', hex: '#f74848' },
  { name: 'Mauve', hex: '#c4a2c9' },
  { name: 'Orange', hex: '#ff8a3d' },
  { name: 'Azure', hex: '#5fb0f8' },
  { name: 'Sand', hex: '#e8c38d' },
  { name: 'Grape', hex: '#9c6cd0' },
  { name: 'Green', hex: '#4cbb6c' },
];

export const colorOf = (color: number) => LABEL_COLORS[color] ?? { name: `Colour ${color}`, hex: '#c5cdd6' };

/** A label's colour: its swatch and its name. */
export function Swatch(props: { color: number; named?: boolean }) {
  const c = colorOf(props.color);
  return (
    <span class="label-colour">
      <span class="swatch" style={{ background: c.hex }} aria-hidden="true" />
      {props.named !== false && <span>{c.name}</span>}
    </span>
  );
}

/** A colour picker: a select of the 20 colours by name. */
function ColourField(props: { id: string; value: number; onChange: (v: number) => void }) {
  return (
    <div>
      <label for={props.id}>Colour</label>
      <div class="colour-field">
        <Swatch color={props.value} named={false} />
        <select
          id={props.id}
          value={String(props.value)}
          onChange={(e) => props.onChange(Number((e.target as HTMLSelectElement).value))}
        >
          {LABEL_COLORS.map((c, i) => (
            <option key={c.name} value={String(i)}>
              {c.name}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}

/** The rename / recolour dialog (a native <dialog>: focus kept in it, Escape closes it). */
function EditDialog(props: {
  label: Label;
  busy: boolean;
  onSave: (change: { name: string; color: number }) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(props.label.name);
  const [color, setColor] = useState(props.label.color);
  return (
    <Modal class="confirm label-dialog" labelledBy="label-edit-title" onCancel={props.onCancel}>
      <h2 id="label-edit-title">
        Edit the label <bdi>{props.label.name}</bdi>
      </h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim()) props.onSave({ name: name.trim(), color });
        }}
      >
        <label for="label-edit-name">Name</label>
        <input
          id="label-edit-name"
          dir="auto"
          maxLength={100}
          value={name}
          onInput={(e) => setName((e.target as HTMLInputElement).value)}
        />
        <ColourField id="label-edit-colour" value={color} onChange={setColor} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onCancel} disabled={props.busy}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={props.busy || !name.trim()}>
            {props.busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The chats carrying a label, each a link to it on the Chats page (the first 100). */
function LabelChats(props: { deviceId: string; label: Label }) {
  const [chats, setChats] = useState<{ chats: string[]; next: string | null } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    api<{ data: { chats: string[]; next: string | null } }>(
      `/devices/${encodeURIComponent(props.deviceId)}/labels/${props.label.id}/chats?limit=100`,
    )
      .then((r) => setChats(r.data))
      .catch((err: Error) => setError(err.message));
  }, [props.deviceId, props.label.id, props.label.chats]);
  if (error) return <Banner kind="error">Could not load the label's chats: {error}</Banner>;
  if (!chats) return <Spinner label="Loading the chats…" />;
  if (chats.chats.length === 0)
    return <Empty>No chat carries this label: label a chat from the Chats page.</Empty>;
  return (
    <ul class="label-chats" aria-label={`Chats labelled ${props.label.name}`}>
      {chats.chats.map((c) => (
        <li key={c}>
          <a
            href={`/dashboard/chats?device=${encodeURIComponent(props.deviceId)}&chat=${encodeURIComponent(c)}`}
            onClick={onLink}
          >
            <IdLabel id={c} />
          </a>
        </li>
      ))}
      {chats.next && <li class="muted small">…and more (the first 100 are shown).</li>}
    </ul>
  );
}

const affectsLabels = (e: LiveEvent) => e.type.startsWith('label.');

/**
 * The account's WhatsApp Business labels (as the device learned them from the phone): create,
 * rename or recolour, delete, and the chats each carries.
 */
export function LabelsPage(props: { deviceId: string }) {
  const can = useCanChange();
  const base = `/devices/${encodeURIComponent(props.deviceId)}/labels`;
  const labels = useLiveData(
    () => api<{ data: { total: number; labels: Label[] } }>(base).then((r) => r.data),
    { device: props.deviceId, affects: affectsLabels },
    [base],
  );
  const [name, setName] = useState('');
  const [color, setColor] = useState(0);
  // A failure is said in the API's own words (no prefix: `act(change, '')`).
  const { busy, notice, act: run } = useAction();
  const [editing, setEditing] = useState<Label | undefined>(undefined);
  const [deleting, setDeleting] = useState<Label | undefined>(undefined);
  const [shown, setShown] = useState<string | undefined>(undefined);

  const act = (work: () => Promise<unknown>, done: string) =>
    run(async () => {
      await work();
      await labels.refresh();
      return done;
    }, '');
  const create = (e: Event) => {
    e.preventDefault();
    const label = name.trim();
    if (!label) return;
    void act(() => api(base, { json: { name: label, color } }), `Label “${label}” created.`).then(
      (ok) => ok && setName(''),
    );
  };
  const list = labels.data?.labels ?? [];
  return (
    <section class="card" aria-labelledby="labels-title" data-testid="labels">
      <h2 id="labels-title">Labels</h2>
      <p class="muted">
        The account's WhatsApp Business labels, as the phone shares them with this device. A change here is
        made on the phone and every linked device too.
      </p>
      {can && (
        <form class="label-create" onSubmit={create} noValidate>
          <div>
            <label for="label-new-name">New label</label>
            <input
              id="label-new-name"
              dir="auto"
              maxLength={100}
              placeholder="VIP"
              value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
          </div>
          <ColourField id="label-new-colour" value={color} onChange={setColor} />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || !name.trim()}>
              Create
            </button>
          </div>
        </form>
      )}
      <NoticeBanner notice={notice} />
      {labels.error && <Banner kind="error">Could not load the labels: {labels.error}</Banner>}
      {labels.loading && !labels.data ? (
        <Spinner label="Loading the labels…" />
      ) : list.length === 0 ? (
        labels.data && (
          <Empty>{can ? 'No labels yet: create one above, or on the phone.' : 'No labels yet.'}</Empty>
        )
      ) : (
        <table class="table responsive labels-table">
          <TableHead columns={['Label', 'Colour', { label: 'Chats', class: 'num' }]} actions scope />
          <tbody>
            {list.map((l) => (
              <Fragment key={l.id}>
                <tr data-testid={`label-${l.id}`}>
                  <td data-label="Label">
                    <span class="label-name">
                      <Swatch color={l.color} named={false} />
                      <bdi>{l.name}</bdi>
                    </span>
                  </td>
                  <td data-label="Colour">{colorOf(l.color).name}</td>
                  <td data-label="Chats" class="num">
                    {l.chats}
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="secondary small-button"
                      aria-expanded={shown === l.id}
                      aria-controls={`label-chats-${l.id}`}
                      onClick={() => setShown(shown === l.id ? undefined : l.id)}
                    >
                      {shown === l.id ? 'Hide chats' : 'Show chats'}
                      <span class="visually-hidden"> of {l.name}</span>
                    </button>
                    {can && (
                      <>
                        <RowButton kind="secondary" disabled={busy} onClick={() => setEditing(l)}>
                          Edit<span class="visually-hidden"> {l.name}</span>
                        </RowButton>
                        <RowButton kind="danger-outline" disabled={busy} onClick={() => setDeleting(l)}>
                          Delete<span class="visually-hidden"> {l.name}</span>
                        </RowButton>
                      </>
                    )}
                  </td>
                </tr>
                {shown === l.id && (
                  <tr class="label-chats-row">
                    <td colSpan={4} id={`label-chats-${l.id}`}>
                      <LabelChats deviceId={props.deviceId} label={l} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
      {editing && (
        <EditDialog
          label={editing}
          busy={busy}
          onCancel={() => setEditing(undefined)}
          onSave={(change) =>
            void act(
              () => api(`${base}/${editing.id}`, { method: 'PATCH', json: change }),
              `Label “${change.name}” saved.`,
            ).then((ok) => ok && setEditing(undefined))
          }
        />
      )}
      {deleting && (
        <Confirm
          title="Delete the label?"
          confirmLabel="Delete"
          busy={busy}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() =>
            void act(
              () => api(`${base}/${deleting.id}`, { method: 'DELETE' }),
              `Label “${deleting.name}” deleted.`,
            ).then(() => setDeleting(undefined))
          }
        >
          <p>
            <bdi>{deleting.name}</bdi> is deleted for the account, on the phone too; its {deleting.chats}{' '}
            {deleting.chats === 1 ? 'chat loses' : 'chats lose'} it.
          </p>
        </Confirm>
      )}
    </section>
  );
}
