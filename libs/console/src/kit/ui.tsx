import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ConnectionStatus, MessageStatus } from './api';
import type { Notice } from './action';

/** Runs `load` now and every `everyMs` while mounted; the latest answer, error and first-load state. */
export function usePoll<T>(load: () => Promise<T>, everyMs: number, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const tick = useRef(0);
  const refresh = async () => {
    const mine = ++tick.current;
    try {
      const value = await load();
      if (mine !== tick.current) return;
      setData(value);
      setError(undefined);
    } catch (err) {
      if (mine === tick.current) setError((err as Error).message);
    } finally {
      if (mine === tick.current) setLoading(false);
    }
  };
  useEffect(() => {
    setLoading(true);
    setData(undefined);
    void refresh();
    const timer = setInterval(() => void refresh(), everyMs);
    return () => {
      clearInterval(timer);
      tick.current++;
    };
  }, deps);
  return { data, error, loading, refresh };
}

export function Banner(props: { kind: 'error' | 'info' | 'success'; children: ComponentChildren }) {
  return (
    <div class={`banner banner-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

/** A section's notice (useAction, useConfirmed: how its last step went) as its Banner; nothing without one. */
export function NoticeBanner(props: { notice: Notice }) {
  return props.notice ? <Banner kind={props.notice.kind}>{props.notice.text}</Banner> : null;
}

const STATUS_LABEL: Record<ConnectionStatus | MessageStatus, string> = {
  connected: 'Connected',
  connecting: 'Connecting',
  disconnected: 'Disconnected',
  scheduled: 'Scheduled',
  queued: 'Queued',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  failed: 'Failed',
  deleted: 'Deleted',
  received: 'Received',
};

export function StatusBadge(props: { status: ConnectionStatus | MessageStatus; testId?: string }) {
  return (
    <span class={`badge badge-${props.status}`} data-testid={props.testId} data-status={props.status}>
      <span class="dot" aria-hidden="true" />
      {STATUS_LABEL[props.status] ?? props.status}
    </span>
  );
}

export function Spinner(props: { label: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" /> {props.label}
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/**
 * A card of a page under its heading: the section is named by its h2 (`aria-labelledby` = the
 * h2's `id`), so a screen reader lists it among the page's regions by that name. Use it for every
 * card with a heading; `title` is the heading's text.
 */
export function Card(props: { id: string; title: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card" aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
    </section>
  );
}

/**
 * The card where one row of a page's "All …" list is edited (a pool, a workspace): the heading
 * "Edit <noun> <id>" (its id `${prefix}-edit-title` names the card) over the row's form, the
 * children. Render it while a row is being edited, above the page's notice and its list.
 */
export function EditCard(props: { prefix: string; noun: string; id: string; children: ComponentChildren }) {
  return (
    <section class="card" aria-labelledby={`${props.prefix}-edit-title`}>
      <h2 id={`${props.prefix}-edit-title`}>
        {`Edit ${props.noun} `}
        <span class="mono">{props.id}</span>
      </h2>
      {props.children}
    </section>
  );
}

/**
 * The body of a list that usePoll loads, under the list's heading: the error of its last load
 * (`failure: error`, the rows it had stay), a Spinner saying `loading` until its first answer,
 * `empty` (in an Empty) when it has no row, else `children(rows)`, its table. Use it for each
 * "All …" list a page polls.
 */
export function PolledList<T>(props: {
  poll: { data: T[] | undefined; error: string | undefined; loading: boolean };
  failure: string;
  loading: string;
  empty: ComponentChildren;
  children: (rows: T[]) => ComponentChildren;
}) {
  const { data, error, loading } = props.poll;
  const rows = data ?? [];
  return (
    <>
      {error && (
        <Banner kind="error">
          {`${props.failure}: `}
          {error}
        </Banner>
      )}
      {loading && !data ? (
        <Spinner label={props.loading} />
      ) : rows.length === 0 ? (
        <Empty>{props.empty}</Empty>
      ) : (
        props.children(rows)
      )}
    </>
  );
}

/**
 * The one way a popup that a toggle button opens under it (a menu, a disclosure's panel) closes:
 * while `open`, a click outside the element the answered ref is put on (the one holding the toggle
 * and the popup), or Escape, calls `close`; Escape also gives the focus back to the toggle, the
 * first element there that `toggle` selects (its first button unless told). A dialog wants Modal.
 */
export function useDismiss<E extends HTMLElement>(open: boolean, close: () => void, toggle = 'button') {
  const ref = useRef<E>(null);
  useEffect(() => {
    if (!open) return;
    const doc = ref.current?.ownerDocument;
    const away = (e: Event) => {
      if (!ref.current?.contains(e.target as Node)) close();
    };
    const esc = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      close();
      ref.current?.querySelector<HTMLElement>(toggle)?.focus();
    };
    doc?.addEventListener('click', away);
    doc?.addEventListener('keydown', esc);
    return () => {
      doc?.removeEventListener('click', away);
      doc?.removeEventListener('keydown', esc);
    };
  }, [open]);
  return ref;
}

/**
 * The console's one modal: a native <dialog> shown with showModal() while mounted (focus kept in
 * it, the page behind inert, Escape calls `onCancel`), closed when unmounted. Render it only while
 * it should be open (`{editing && <Modal …>}`). For "are you sure?" use Confirm, built on it; use
 * Modal itself for a dialog that holds a form of its own.
 */
export function Modal(props: {
  class: string;
  /** The id of the heading that names the dialog. */
  labelledBy: string;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} class={props.class} aria-labelledby={props.labelledBy} onCancel={props.onCancel}>
      {props.children}
    </dialog>
  );
}

/**
 * The console's one confirmation of a step that cannot be taken back (delete, revoke, remove,
 * suspend…): a Modal with a title, what will happen, a dismiss button and the danger button.
 * Render it while something waits to be confirmed (`{removing && <Confirm …>}`); pass `busy`
 * while the step runs, and close it (stop rendering it) when the step is done.
 */
export function Confirm(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** The button that closes it doing nothing ("Cancel" unless the action is itself a cancel). */
  dismissLabel?: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Modal class="confirm" labelledBy="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      <div class="confirm-body">{props.children}</div>
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel} disabled={props.busy}>
          {props.dismissLabel ?? 'Cancel'}
        </button>
        <button type="button" class="danger" onClick={props.onConfirm} disabled={props.busy}>
          {props.busy ? 'Working…' : props.confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
