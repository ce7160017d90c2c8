import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, type Device, type Message } from '../kit/api';
import { useSubmit } from '../kit/form';
import { ago, exact, idKind, phone } from '../kit/format';
import { LiveIndicator, useLiveData, type LiveEvent } from '../kit/live';
import { navigate, query } from '../kit/router';
import { Banner, Empty, Spinner, StatusBadge } from '../kit/ui';
import { ChatActions, chatPath } from './chat-actions';
import { useCanChange } from '../kit/session';
import { ReplyBox } from './chat-compose';
import { BubbleReactions, ReactButton, ourReactions, reactable } from './chat-reactions';
import { ChatRow, chatName, known, type Chat } from './chat-row';
import type { Label } from '../labels/device-labels';
import { MessageContent } from '../messages/message-content';
import { IdLabel } from '../kit/recipient';
import './chats.css';
import { RowButton } from '../kit/table';

/** Messages and calls change chats; receipts change the statuses a chat shows; app-state its pin, archive, mute, labels. */
const affectsChats = (e: LiveEvent) =>
  e.type.startsWith('message.') ||
  e.type.startsWith('call.') ||
  e.type === 'chat.updated' ||
  e.type.startsWith('label.');

/** Who wrote a group message: its author's number, else its LID (a member known only by it). */
const authorOf = (m: Message) => (m.contact?.phone ? phone(m.contact.phone) : m.contact?.lid);

/**
 * One message as a bubble: in a group, an inbound one names its author; the account's reaction and
 * the contacts' are under it, with "React" (chat-reactions.tsx) on every message one may react to.
 */
function Bubble(props: {
  m: Message;
  deviceId: string;
  chatId: string;
  mine: { emoji: string; pending: boolean } | undefined;
  onReacted: (emoji: string) => void;
}) {
  const m = props.m;
  const inbound = m.direction === 'inbound';
  const at = inbound ? (m.receivedAt ?? m.createdAt) : (m.sentAt ?? m.createdAt);
  const author = inbound && m.chat ? authorOf(m) : undefined;
  const mine = props.mine?.emoji ?? '';
  return (
    <li
      class={`bubble bubble-${inbound ? 'in' : 'out'}`}
      data-testid={`chat-message-${m.messageId}`}
      data-my-reaction={mine || undefined}
    >
      {author && (
        <div class="bubble-author small" data-testid="bubble-author">
          <bdi>{author}</bdi>
        </div>
      )}
      <MessageContent m={m} />
      <BubbleReactions m={m} mine={mine} pending={!!props.mine?.pending} />
      <div class="bubble-meta muted small">
        {reactable(m) && (
          <ReactButton
            deviceId={props.deviceId}
            chatId={props.chatId}
            m={m}
            mine={mine}
            onReacted={props.onReacted}
          />
        )}
        <span title={exact(at)}>{ago(at)}</span>
        {!inbound && <StatusBadge status={m.status} />}
      </div>
    </li>
  );
}

/** Marks every unread message of the chat read: the contact sees the read receipts. */
function MarkReadButton(props: { deviceId: string; chat: Chat; onRead: () => void }) {
  const mark = useSubmit(async () => {
    await api(`${chatPath(props.deviceId, props.chat.id)}/read`, { method: 'POST' });
    props.onRead();
  });
  const { busy, error } = mark;
  return (
    <>
      <RowButton kind="secondary" disabled={busy} onClick={() => void mark.run()}>
        {busy ? 'Marking…' : 'Mark read'}
      </RowButton>
      {error && <Banner kind="error">Could not mark the chat read: {error}</Banner>}
    </>
  );
}

/** The phone layout (chats.css): the list above the open chat, not beside it. */
const NARROW = '(max-width: 760px)';

/** Scrolls the page so `el` starts just under the sticky top bar. */
function scrollBelowBar(el: HTMLElement): void {
  const bar = document.querySelector('.topbar')?.getBoundingClientRect().bottom ?? 0;
  window.scrollTo({ top: window.scrollY + el.getBoundingClientRect().top - bar - 8 });
}

/**
 * One chat's messages, oldest at the top like a phone shows them (older pages on request), with a
 * reply box below and "Mark read" while the chat has unread messages. On a phone, where the chat
 * opens below the whole list, a chat chosen there (`revealed` counts the choices) is scrolled into
 * view under the top bar and its heading takes the focus; "All chats" goes back up.
 */
function ChatMessages(props: {
  deviceId: string;
  chat: Chat;
  labels: Label[];
  version: unknown;
  revealed: number;
  onBack: () => void;
  onChanged: () => void;
}) {
  const { deviceId, chat } = props;
  const can = useCanChange();
  const pane = useRef<HTMLElement>(null);
  const title = useRef<HTMLHeadingElement>(null);
  // Brought into view at once, and again once its messages are in (within 5 s): the page may have
  // been too short to scroll that far while the chat was loading.
  const revealedAt = useRef(0);
  useEffect(() => {
    const el = pane.current;
    if (props.revealed === 0 || !el || !window.matchMedia(NARROW).matches) return;
    revealedAt.current = Date.now();
    scrollBelowBar(el);
    title.current?.focus({ preventScroll: true });
  }, [props.revealed]);
  const [pages, setPages] = useState<{ messages: Message[]; nextCursor?: string } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  // A reply sent here reloads the messages at once, before any event says so.
  const [sent, setSent] = useState(0);
  const list = useRef<HTMLOListElement>(null);
  const base = `${chatPath(deviceId, chat.id)}/messages?limit=50`;
  // Only the latest load is shown: an earlier chat's answer arriving after another chat was
  // opened (an event reloaded it meanwhile) must not fill this chat's pane.
  useEffect(() => {
    let current = true;
    api<{ messages: Message[]; nextCursor?: string }>(base)
      .then((p) => {
        if (!current) return;
        setPages(p);
        setError(undefined);
      })
      .catch((err: Error) => current && setError(err.message));
    return () => {
      current = false;
    };
  }, [deviceId, chat.id, props.version, sent]);
  // The newest message in view, as a phone opens a chat.
  const newest = pages?.messages[0]?.messageId;
  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [newest]);
  useEffect(() => {
    if (!pages || !pane.current || Date.now() - revealedAt.current > 5_000) return;
    revealedAt.current = 0;
    scrollBelowBar(pane.current);
  }, [pages]);
  // Reactions chosen here, shown until the page's messages carry them (the record comes with the reload).
  const [pending, setPending] = useState<Record<string, string>>({});
  useEffect(() => setPending({}), [deviceId, chat.id]);
  const ours = useMemo(() => ourReactions(pages?.messages ?? []), [pages]);
  useEffect(
    () =>
      setPending((p) => {
        const left = Object.entries(p).filter(([id, emoji]) => (ours.get(id)?.emoji ?? '') !== emoji);
        return left.length === Object.keys(p).length ? p : Object.fromEntries(left);
      }),
    [ours],
  );
  const ids = new Set(pages?.messages.map((m) => m.messageId));
  // A reaction of ours is shown on its message (when the page has it), not as a bubble of its own.
  const shown = (pages?.messages ?? []).filter(
    (m) => !(m.reaction && m.direction !== 'inbound' && ids.has(m.reaction.messageId)),
  );
  const mineOf = (id: string) => {
    const queued = pending[id];
    if (queued !== undefined) return { emoji: queued, pending: true };
    const got = ours.get(id);
    return got ? { emoji: got.emoji, pending: got.status === 'queued' } : undefined;
  };
  const older = async () => {
    if (!pages?.nextCursor) return;
    const p = await api<{ messages: Message[]; nextCursor?: string }>(`${base}&cursor=${pages.nextCursor}`);
    setPages({ messages: [...pages.messages, ...p.messages], nextCursor: p.nextCursor });
  };
  return (
    <section class="card chat-pane" aria-label={`Messages of ${chatName(chat)}`} ref={pane}>
      <button type="button" class="link chat-back" onClick={props.onBack}>
        ← All chats
      </button>
      <div class="chat-pane-head">
        <div class="chat-pane-title">
          <h2 ref={title} tabIndex={-1}>
            <IdLabel id={chat.id} known={known(chat)} />
          </h2>
          {chat.type === 'direct' && chat.contact?.lid && <p class="muted small mono">{chat.contact.lid}</p>}
        </div>
        {chat.unreadCount > 0 && <MarkReadButton deviceId={deviceId} chat={chat} onRead={props.onChanged} />}
      </div>
      {/* Pin, archive, mute and labels change the account's app state: not an agent's to change. */}
      {can && idKind(chat.id) !== 'status' && idKind(chat.id) !== 'channel' && (
        <ChatActions deviceId={deviceId} chat={chat} labels={props.labels} onChanged={props.onChanged} />
      )}
      {error && <Banner kind="error">Could not load the messages: {error}</Banner>}
      {!pages ? (
        <Spinner label="Loading messages…" />
      ) : (
        <>
          {pages.nextCursor && (
            <RowButton kind="secondary" onClick={() => void older()}>
              Older messages
            </RowButton>
          )}
          <ol class="bubbles" ref={list}>
            {[...shown].reverse().map((m) => (
              <Bubble
                key={m.messageId}
                m={m}
                deviceId={deviceId}
                chatId={chat.id}
                mine={mineOf(m.messageId)}
                onReacted={(emoji) => {
                  setPending((p) => ({ ...p, [m.messageId]: emoji }));
                  setSent((n) => n + 1);
                }}
              />
            ))}
          </ol>
        </>
      )}
      {idKind(chat.id) !== 'status' && idKind(chat.id) !== 'channel' && (
        <ReplyBox
          deviceId={deviceId}
          chat={chat}
          onSent={() => {
            setSent((n) => n + 1);
            props.onChanged();
          }}
        />
      )}
    </section>
  );
}

/** Typing goes to the field, not to the page's keys. */
const typing = (t: EventTarget | null) => {
  const el = t as HTMLElement | null;
  return !!el && (['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) || el.isContentEditable);
};

/**
 * The list by keyboard: j or ArrowDown to the next chat, k or ArrowUp to the previous one (j and
 * k from anywhere on the page, the arrows inside the list), Enter opens the focused chat (it is a
 * button), r to the open chat's reply box. Keys typed in a field are the field's.
 */
function useChatKeys(list: { current: HTMLElement | null }) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || typing(e.target)) return;
      const rows = [...(list.current?.querySelectorAll<HTMLButtonElement>('.chat-row') ?? [])];
      if (e.key === 'r') {
        const reply = list.current?.ownerDocument.getElementById('chat-reply-text');
        if (!reply) return;
        e.preventDefault();
        reply.focus();
        return;
      }
      const down = e.key === 'j' || e.key === 'ArrowDown';
      const up = e.key === 'k' || e.key === 'ArrowUp';
      if ((!down && !up) || rows.length === 0) return;
      const at = rows.indexOf(e.target as HTMLButtonElement);
      // The arrows keep scrolling the page outside the list.
      if (at < 0 && e.key.startsWith('Arrow')) return;
      e.preventDefault();
      const from = at >= 0 ? at : rows.findIndex((r) => r.tabIndex === 0);
      const next = at < 0 ? Math.max(from, 0) : Math.min(Math.max(at + (down ? 1 : -1), 0), rows.length - 1);
      rows.forEach((r, i) => (r.tabIndex = i === next ? 0 : -1));
      rows[next]?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}

export function ChatsPage() {
  /** An agent answers chats; their pin, archive, mute and labels are not its to change. */
  const canChange = useCanChange();
  const [devices, setDevices] = useState<Device[] | undefined>(undefined);
  const deviceId = query('device') ?? devices?.[0]?.deviceId ?? '';
  const open = query('chat');
  const chats = useLiveData(
    () =>
      deviceId
        ? api<{ chats: Chat[] }>(`/devices/${encodeURIComponent(deviceId)}/chats?limit=100`)
        : Promise.resolve({ chats: [] }),
    { ...(deviceId ? { device: deviceId } : { off: true }), affects: affectsChats },
    [deviceId],
  );
  // The account's labels, for the chips and the labels menu (none while the device has no app-state key).
  const labels = useLiveData(
    () =>
      deviceId
        ? api<{ data: { labels: Label[] } }>(`/devices/${encodeURIComponent(deviceId)}/labels`)
            .then((r) => r.data.labels)
            .catch(() => [] as Label[])
        : Promise.resolve([] as Label[]),
    { ...(deviceId ? { device: deviceId } : { off: true }), affects: (e) => e.type === 'label.edited' },
    [deviceId],
  );
  const [showArchived, setShowArchived] = useState(false);
  useEffect(() => {
    api<{ devices: Device[] }>('/devices')
      .then((r) => setDevices(r.devices))
      .catch(() => setDevices([]));
  }, []);
  const show = (device: string, chat?: string) =>
    navigate(
      `/dashboard/chats?device=${encodeURIComponent(device)}${chat ? `&chat=${encodeURIComponent(chat)}` : ''}`,
    );
  // status@broadcast holds the account's own status updates (POST /statuses): no one to chat with.
  const all = (chats.data?.chats ?? []).filter((c) => idKind(c.id) !== 'status');
  const archivedCount = all.filter((c) => c.archived).length;
  const archivedView = showArchived && archivedCount > 0;
  // As the phone lists them: pinned chats first, the archived ones apart (behind "Archived (n)").
  const list = all
    .filter((c) => !!c.archived === archivedView)
    .sort((a, b) => Number(!!b.pinned) - Number(!!a.pinned));
  const selected = all.find((c) => c.id === open);
  const listRef = useRef<HTMLElement>(null);
  useChatKeys(listRef);
  // Chats chosen in the list: on a phone each brings the open chat into view (ChatMessages).
  const [revealed, setRevealed] = useState(0);
  /** Back from the open chat to the list (a phone's "All chats"): its row takes the focus. */
  const backToList = () => {
    const list = listRef.current;
    if (!list) return;
    scrollBelowBar(list);
    list.querySelector<HTMLElement>('.chat-row.selected')?.focus({ preventScroll: true });
  };
  return (
    <>
      <div class="page-head">
        <div class="page-title">
          <h1>Chats</h1>
          {deviceId && <LiveIndicator state={chats.live} />}
        </div>
        <p class="muted">
          The conversations of a device, most recent first, from what the gateway recorded: what contacts
          wrote and what the device sent; pinned chats first, archived ones apart. Open a chat to reply to it
          with a text or a file, react to a message, mark it read (the contact sees the read receipts)
          {canChange ? ', pin, archive, mute or label it (the phone shows it too).' : '.'}
        </p>
      </div>
      <section class="card toolbar">
        <div>
          <label for="chats-device">Device</label>
          <select
            id="chats-device"
            value={deviceId}
            onChange={(e) => show((e.target as HTMLSelectElement).value)}
          >
            {(devices ?? []).map((d) => (
              <option key={d.deviceId} value={d.deviceId}>
                {d.deviceId}
                {d.name ? ` — ${d.name}` : ''}
              </option>
            ))}
          </select>
        </div>
      </section>
      {chats.error && <Banner kind="error">Could not load chats: {chats.error}</Banner>}
      {devices === undefined || (chats.loading && !chats.data) ? (
        <Spinner label="Loading chats…" />
      ) : !deviceId ? (
        <Empty>No devices yet: link one on the Devices page.</Empty>
      ) : all.length === 0 ? (
        <Empty>No chats for {deviceId} yet: they appear as contacts write and messages are sent.</Empty>
      ) : (
        <div class="chats-layout">
          <section class="card chat-list" aria-label="Chats" ref={listRef}>
            {archivedCount > 0 && (
              <button
                type="button"
                class="link chat-archived-toggle"
                onClick={() => setShowArchived(!archivedView)}
              >
                {archivedView ? '← Back to all chats' : `Archived (${archivedCount})`}
              </button>
            )}
            {archivedView && <h2 class="chat-list-title">Archived chats</h2>}
            {list.length === 0 && <Empty>Every chat is archived: open “Archived” to see them.</Empty>}
            <ul>
              {list.map((c, i) => (
                <ChatRow
                  key={c.id}
                  chat={c}
                  labels={labels.data ?? []}
                  selected={c.id === open}
                  focusable={selected ? c.id === selected.id : i === 0}
                  onOpen={() => {
                    show(deviceId, c.id);
                    setRevealed((n) => n + 1);
                  }}
                />
              ))}
            </ul>
            <p class="chat-keys hint">
              <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move, <kbd>Enter</kbd> opens,{' '}
              <kbd>r</kbd> replies.
            </p>
          </section>
          {selected ? (
            <ChatMessages
              deviceId={deviceId}
              chat={selected}
              labels={labels.data ?? []}
              version={selected.lastMessage.messageId}
              revealed={revealed}
              onBack={backToList}
              // A read or a reply changes the list (unread counts, the last message): no event says so.
              onChanged={() => void chats.refresh()}
            />
          ) : (
            <section class="card chat-pane">
              <Empty>Choose a chat to read its messages.</Empty>
            </section>
          )}
        </div>
      )}
    </>
  );
}
