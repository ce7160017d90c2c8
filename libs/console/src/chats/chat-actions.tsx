import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../kit/api';
import { NoticeBanner, useDismiss } from '../kit/ui';
import { mutedFor, type Chat } from './chat-row';
import { Swatch, type Label } from '../labels/device-labels';
import { RowButton } from '../kit/table';

/** The admin API's path of a chat of the device. */
export const chatPath = (deviceId: string, chatId: string) =>
  `/devices/${encodeURIComponent(deviceId)}/chats/${encodeURIComponent(chatId)}`;

/** How long a mute lasts: the public PATCH /chats/:chatId takes up to a year (MUTE_MAX_SECONDS). */
const MUTES = [
  { label: '8 hours', seconds: 8 * 3600 },
  { label: '1 week', seconds: 7 * 24 * 3600 },
  { label: '1 year (the longest)', seconds: 365 * 24 * 3600 },
] as const;

/** What the pane changed that the list may not show yet. */
interface Made {
  pinned?: boolean;
  archived?: boolean;
  muted?: boolean;
  labels?: Record<string, boolean>;
}

/** The changes the list does not show yet (those it shows are dropped: later changes are the list's). */
function stillAhead(m: Made, chat: Chat): Made {
  const labels = Object.fromEntries(
    Object.entries(m.labels ?? {}).filter(([id, on]) => (chat.labels ?? []).includes(id) !== on),
  );
  return {
    ...(m.pinned !== undefined && m.pinned !== !!chat.pinned ? { pinned: m.pinned } : {}),
    ...(m.archived !== undefined && m.archived !== !!chat.archived ? { archived: m.archived } : {}),
    ...(m.muted !== undefined && m.muted !== !!chat.mutedUntil ? { muted: m.muted } : {}),
    ...(Object.keys(labels).length ? { labels } : {}),
  };
}

/**
 * A button that opens a small panel under it (a disclosure: its items are ordinary buttons and
 * checkboxes, in the Tab order); Escape or a click elsewhere closes it.
 */
function Disclosure(props: {
  id: string;
  label: string;
  disabled?: boolean;
  children: (close: () => void) => ComponentChildren;
}) {
  const [open, setOpen] = useState(false);
  const ref = useDismiss<HTMLDivElement>(open, () => setOpen(false));
  return (
    <div class="chat-menu" ref={ref}>
      <button
        type="button"
        class="secondary small-button"
        aria-expanded={open}
        aria-controls={props.id}
        disabled={props.disabled}
        onClick={() => setOpen(!open)}
      >
        {props.label} ▾
      </button>
      {open && (
        <div class="chat-menu-panel" id={props.id}>
          {props.children(() => setOpen(false))}
        </div>
      )}
    </div>
  );
}

/**
 * The open chat's state, as WhatsApp keeps it on the phone and every linked device: pin, archive,
 * mute (8 hours, a week, a year) and the account's labels. Each change is an app-state patch the
 * device makes (the public PATCH /chats/:chatId and /chats/:chatId/labels); the list shows it when
 * the device reports it back (`chat.updated`, `label.association`).
 */
export function ChatActions(props: { deviceId: string; chat: Chat; labels: Label[]; onChanged: () => void }) {
  const { deviceId, chat } = props;
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ kind: 'error' | 'success'; text: string } | undefined>(undefined);
  // What this pane changed, shown until the list reports it (the device's event comes a moment later).
  const [made, setMade] = useState<Made>({});
  useEffect(() => {
    setNotice(undefined);
    setMade({});
  }, [deviceId, chat.id]);
  const reported = `${!!chat.pinned} ${!!chat.archived} ${!!chat.mutedUntil} ${(chat.labels ?? []).join()}`;
  useEffect(() => setMade((m) => stillAhead(m, chat)), [reported]);
  const pinned = made.pinned ?? !!chat.pinned;
  const archived = made.archived ?? !!chat.archived;
  const muted = made.muted ?? !!chat.mutedUntil;
  const path = chatPath(deviceId, chat.id);
  const act = async (work: () => Promise<unknown>, done: string, change: Made) => {
    setBusy(true);
    setNotice(undefined);
    // Shown at once (a checkbox shows its new state); taken back if the device refuses.
    const before = made;
    setMade((m) => ({ ...m, ...change, labels: { ...m.labels, ...change.labels } }));
    try {
      await work();
      setNotice({ kind: 'success', text: done });
      props.onChanged();
    } catch (err) {
      setMade(before);
      setNotice({ kind: 'error', text: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };
  const state = (json: Record<string, unknown>, done: string, change: Made) =>
    void act(() => api(path, { method: 'PATCH', json }), done, change);
  const label = (l: Label, on: boolean) =>
    void act(
      () =>
        on
          ? api(`${path}/labels`, { json: { labelId: l.id } })
          : api(`${path}/labels/${l.id}`, { method: 'DELETE' }),
      on ? `Labelled “${l.name}”.` : `“${l.name}” taken off.`,
      { labels: { [l.id]: on } },
    );
  const carries = (id: string) => made.labels?.[id] ?? (chat.labels ?? []).includes(id);
  return (
    <div class="chat-actions" role="group" aria-label="Chat actions">
      <RowButton
        kind="secondary"
        disabled={busy}
        onClick={() => state({ pinned: !pinned }, pinned ? 'Unpinned.' : 'Pinned.', { pinned: !pinned })}
      >
        {pinned ? 'Unpin' : 'Pin'}
      </RowButton>
      <RowButton
        kind="secondary"
        disabled={busy}
        onClick={() =>
          state({ archived: !archived }, archived ? 'Unarchived.' : 'Archived.', { archived: !archived })
        }
      >
        {archived ? 'Unarchive' : 'Archive'}
      </RowButton>
      {muted ? (
        <button
          type="button"
          class="secondary small-button"
          disabled={busy}
          title={chat.mutedUntil ? mutedFor(chat.mutedUntil) : undefined}
          onClick={() => state({ muted: false }, 'Unmuted.', { muted: false })}
        >
          Unmute
        </button>
      ) : (
        <Disclosure id="chat-mute-menu" label="Mute" disabled={busy}>
          {(close) => (
            <ul class="chat-menu-list" aria-label="Mute for">
              {MUTES.map((m) => (
                <li key={m.seconds}>
                  <button
                    type="button"
                    class="link"
                    onClick={() => {
                      close();
                      state({ muted: true, muteSeconds: m.seconds }, `Muted for ${m.label}.`, {
                        muted: true,
                      });
                    }}
                  >
                    For {m.label}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </Disclosure>
      )}
      <Disclosure id="chat-label-menu" label="Labels" disabled={busy}>
        {() =>
          props.labels.length === 0 ? (
            <p class="muted small">No labels yet: create them on the device's Labels tab.</p>
          ) : (
            <fieldset class="chat-menu-list">
              <legend class="visually-hidden">Labels of this chat</legend>
              {props.labels.map((l) => (
                <label key={l.id} class="check">
                  <input
                    type="checkbox"
                    checked={carries(l.id)}
                    disabled={busy}
                    onChange={(e) => label(l, (e.target as HTMLInputElement).checked)}
                  />{' '}
                  <Swatch color={l.color} named={false} /> <bdi>{l.name}</bdi>
                </label>
              ))}
            </fieldset>
          )
        }
      </Disclosure>
      <NoticeBanner notice={notice} />
    </div>
  );
}
