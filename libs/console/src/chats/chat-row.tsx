import { ago, exact, nameOf } from '../kit/format';
import { colorOf, type Label } from '../labels/device-labels';
import { IdLabel } from '../kit/recipient';

/**
 * A chat of the admin API's GET /devices/:deviceId/chats: the public GET /chats's shape, with the
 * chat's app-state (pinned, archived, muted until) and the ids of its labels.
 */
export interface Chat {
  id: string;
  type: 'direct' | 'group';
  contact?: { phone?: string; lid?: string };
  subject?: string;
  unreadCount: number;
  lastActivityAt: string;
  /** In short: the whole message is on the chat's page. */
  lastMessage: { messageId: string; direction: 'inbound' | 'outbound'; at: string; text?: string };
  pinned?: boolean;
  archived?: boolean;
  /** When its mute ends (ISO), or null. */
  mutedUntil?: string | null;
  labels?: string[];
}

/** What a chat's record knows of its id besides: a group's subject, a LID's number. */
export const known = (c: Chat) => ({ name: c.subject, phone: c.contact?.phone });
export const chatName = (c: Chat) => nameOf(c.id, known(c)).name;

/** A mute with no end (WhatsApp's "Always"): its end is past the year 9999. */
export const mutedFor = (until: string) =>
  Date.parse(until) > Date.parse('9999-01-01') ? 'Muted always' : `Muted until ${exact(until)}`;

/** A pin and a struck-through bell (Material icons' paths), drawn in the text's colour. */
const PIN =
  'M16 9V4h1c.55 0 1-.45 1-1s-.45-1-1-1H7c-.55 0-1 .45-1 1s.45 1 1 1h1v5c0 1.66-1.34 3-3 3v2h5.97v7l1 1 1-1v-7H19v-2c-1.66 0-3-1.34-3-3z';
const MUTED =
  'M20 18.69 7.84 6.14 5.27 3.49 4 4.76l2.8 2.8v.01c-.52.99-.8 2.16-.8 3.42v5l-2 2v1h13.73l2 2L21 19.72l-1-1.03zM12 22c1.11 0 2-.89 2-2h-4c0 1.11.89 2 2 2zm6-7.32V11c0-3.08-1.64-5.64-4.5-6.32V4c0-.83-.67-1.5-1.5-1.5s-1.5.67-1.5 1.5v.68c-.15.03-.29.08-.42.12-.1.03-.2.07-.3.11h-.01c-.01 0-.01 0-.02.01-.23.09-.46.2-.68.31 0 0-.01 0-.01.01L18 14.68z';

/** A state's icon, named for assistive technology and in its tooltip. */
function Icon(props: { testId: string; label: string; path: string }) {
  return (
    <svg
      class="chat-marker"
      data-testid={props.testId}
      role="img"
      aria-label={props.label}
      viewBox="0 0 24 24"
      width="14"
      height="14"
    >
      <title>{props.label}</title>
      <path d={props.path} fill="currentColor" />
    </svg>
  );
}

/** The labels a chat carries, as chips of their colour and name (the labels the device knows). */
export function LabelChips(props: { ids: string[] | undefined; labels: Label[] }) {
  const carried = props.labels.filter((l) => props.ids?.includes(l.id));
  if (carried.length === 0) return null;
  return (
    <span class="label-chips">
      {carried.map((l) => (
        <span key={l.id} class="label-chip" data-testid={`chip-${l.id}`}>
          <span class="swatch" style={{ background: colorOf(l.color).hex }} aria-hidden="true" />
          <bdi>{l.name}</bdi>
        </span>
      ))}
    </span>
  );
}

/** One chat of the list: its name, last activity and message, unread count, pin, mute and labels. */
export function ChatRow(props: {
  chat: Chat;
  labels: Label[];
  selected: boolean;
  focusable: boolean;
  onOpen: () => void;
}) {
  const c = props.chat;
  const last = c.lastMessage;
  return (
    <li>
      <button
        type="button"
        class={`chat-row${props.selected ? ' selected' : ''}`}
        data-testid={`chat-${c.id}`}
        aria-current={props.selected ? 'true' : undefined}
        // Roving focus: Tab enters the list once (on the open chat, else the first); j/k or the arrows move in it.
        tabIndex={props.focusable ? 0 : -1}
        onClick={props.onOpen}
      >
        <span class="chat-name">
          <IdLabel id={c.id} known={known(c)} />
        </span>
        <span class="chat-when muted small" title={exact(c.lastActivityAt)}>
          {c.pinned && <Icon testId="pinned" label="Pinned" path={PIN} />}
          {c.mutedUntil && <Icon testId="muted" label={mutedFor(c.mutedUntil)} path={MUTED} />}
          {ago(c.lastActivityAt)}
        </span>
        <span class="chat-last small">
          {last.direction === 'outbound' ? 'You: ' : ''}
          {last.text ?? '—'}
        </span>
        {c.unreadCount > 0 && (
          <span class="chat-unread" aria-label={`${c.unreadCount} unread`}>
            {c.unreadCount}
          </span>
        )}
        <LabelChips ids={c.labels} labels={props.labels} />
      </button>
    </li>
  );
}
