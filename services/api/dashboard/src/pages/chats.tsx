import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Device, type Message } from '../api';
import { ago, exact, idKind, nameOf, phone } from '../format';
import { LiveIndicator, useLiveData, type LiveEvent } from '../live';
import { navigate, query } from '../router';
import { Banner, Empty, Spinner, StatusBadge } from '../ui';
import { MessageContent } from './message-content';
import { IdLabel } from './recipient';
import '../chats.css';

/** A chat of the admin API's GET /devices/:deviceId/chats (the public GET /chats's shape). */
export interface Chat {
  id: string;
  type: 'direct' | 'group';
  contact?: { phone?: string; lid?: string };
  subject?: string;
  unreadCount: number;
  lastActivityAt: string;
  /** In short: the whole message is on the chat's page. */
  lastMessage: { messageId: string; direction: 'inbound' | 'outbound'; at: string; text?: string };
}

/** Messages and calls change chats; receipts change the statuses a chat shows. */
const affectsChats = (e: LiveEvent) => e.type.startsWith('message.') || e.type.startsWith('call.');

/** What a chat's record knows of its id besides: a group's subject, a LID's number. */
const known = (c: Chat) => ({ name: c.subject, phone: c.contact?.phone });
const chatName = (c: Chat) => nameOf(c.id, known(c)).name;

function ChatRow(props: { chat: Chat; selected: boolean; focusable: boolean; onOpen: () => void }) {
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
      </button>
    </li>
  );
}

function Bubble(props: { m: Message }) {
  const m = props.m;
  const inbound = m.direction === 'inbound';
  const at = inbound ? (m.receivedAt ?? m.createdAt) : (m.sentAt ?? m.createdAt);
  return (
    <li class={`bubble bubble-${inbound ? 'in' : 'out'}`} data-testid={`chat-message-${m.messageId}`}>
      {inbound && m.chat && m.contact?.phone && <div class="muted small">{phone(m.contact.phone)}</div>}
      <MessageContent m={m} />
      <div class="bubble-meta muted small">
        <span title={exact(at)}>{ago(at)}</span>
        {!inbound && <StatusBadge status={m.status} />}
      </div>
    </li>
  );
}

/** The admin API's path of a chat of the device. */
const chatPath = (deviceId: string, chatId: string) =>
  `/devices/${encodeURIComponent(deviceId)}/chats/${encodeURIComponent(chatId)}`;

/**
 * The operator's reply to the open chat: sent as the public POST /send sends it (the paced queue,
 * quotas, opt-outs, the blocklist). Enter sends, Shift+Enter starts a new line.
 */
function ReplyBox(props: { deviceId: string; chat: Chat; onSent: () => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    setText('');
    setError(undefined);
  }, [props.deviceId, props.chat.id]);
  const send = async () => {
    const reply = text.trim();
    if (busy || !reply) return;
    setBusy(true);
    setError(undefined);
    try {
      await api(`${chatPath(props.deviceId, props.chat.id)}/messages`, { json: { text: reply } });
      setText('');
      props.onSent();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="chat-reply"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      {error && <Banner kind="error">Could not send the reply: {error}</Banner>}
      <label for="chat-reply-text">Reply</label>
      <div class="chat-reply-row">
        <textarea
          id="chat-reply-text"
          rows={2}
          value={text}
          // Read-only, not disabled, while sending: the caret stays in the box for the next reply.
          readOnly={busy}
          aria-describedby="chat-reply-hint"
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <button type="submit" class="primary" disabled={busy || !text.trim()}>
          {busy ? 'Sending…' : 'Send'}
        </button>
      </div>
      <p id="chat-reply-hint" class="hint">
        Enter sends, Shift+Enter starts a new line. The reply is queued and paced like any message the device
        sends.
      </p>
    </form>
  );
}

/** Marks every unread message of the chat read: the contact sees the read receipts. */
function MarkReadButton(props: { deviceId: string; chat: Chat; onRead: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const mark = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await api(`${chatPath(props.deviceId, props.chat.id)}/read`, { method: 'POST' });
      props.onRead();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class="secondary small-button" disabled={busy} onClick={() => void mark()}>
        {busy ? 'Marking…' : 'Mark read'}
      </button>
      {error && <Banner kind="error">Could not mark the chat read: {error}</Banner>}
    </>
  );
}

/**
 * One chat's messages, oldest at the top like a phone shows them (older pages on request), with a
 * reply box below and "Mark read" while the chat has unread messages.
 */
function ChatMessages(props: { deviceId: string; chat: Chat; version: unknown; onChanged: () => void }) {
  const { deviceId, chat } = props;
  const [pages, setPages] = useState<{ messages: Message[]; nextCursor?: string } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  // A reply sent here reloads the messages at once, before any event says so.
  const [sent, setSent] = useState(0);
  const list = useRef<HTMLOListElement>(null);
  const base = `${chatPath(deviceId, chat.id)}/messages?limit=50`;
  useEffect(() => {
    api<{ messages: Message[]; nextCursor?: string }>(base)
      .then((p) => {
        setPages(p);
        setError(undefined);
      })
      .catch((err: Error) => setError(err.message));
  }, [deviceId, chat.id, props.version, sent]);
  // The newest message in view, as a phone opens a chat.
  const newest = pages?.messages[0]?.messageId;
  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight;
  }, [newest]);
  const older = async () => {
    if (!pages?.nextCursor) return;
    const p = await api<{ messages: Message[]; nextCursor?: string }>(`${base}&cursor=${pages.nextCursor}`);
    setPages({ messages: [...pages.messages, ...p.messages], nextCursor: p.nextCursor });
  };
  return (
    <section class="card chat-pane" aria-label={`Messages of ${chatName(chat)}`}>
      <div class="chat-pane-head">
        <h2>
          <IdLabel id={chat.id} known={known(chat)} />
        </h2>
        {chat.unreadCount > 0 && <MarkReadButton deviceId={deviceId} chat={chat} onRead={props.onChanged} />}
      </div>
      {chat.type === 'direct' && chat.contact?.lid && <p class="muted small mono">{chat.contact.lid}</p>}
      {error && <Banner kind="error">Could not load the messages: {error}</Banner>}
      {!pages ? (
        <Spinner label="Loading messages…" />
      ) : (
        <>
          {pages.nextCursor && (
            <button type="button" class="secondary small-button" onClick={() => void older()}>
              Older messages
            </button>
          )}
          <ol class="bubbles" ref={list}>
            {[...pages.messages].reverse().map((m) => (
              <Bubble key={m.messageId} m={m} />
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
  const list = (chats.data?.chats ?? []).filter((c) => idKind(c.id) !== 'status');
  const selected = list.find((c) => c.id === open);
  const listRef = useRef<HTMLElement>(null);
  useChatKeys(listRef);
  return (
    <>
      <div class="page-head">
        <div class="page-title">
          <h1>Chats</h1>
          {deviceId && <LiveIndicator state={chats.live} />}
        </div>
        <p class="muted">
          The conversations of a device, most recent first, from what the gateway recorded: what contacts
          wrote and what the device sent. Open a chat to reply to it or mark it read (the contact sees the
          read receipts).
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
      ) : list.length === 0 ? (
        <Empty>No chats for {deviceId} yet: they appear as contacts write and messages are sent.</Empty>
      ) : (
        <div class="chats-layout">
          <section class="card chat-list" aria-label="Chats" ref={listRef}>
            <ul>
              {list.map((c, i) => (
                <ChatRow
                  key={c.id}
                  chat={c}
                  selected={c.id === open}
                  focusable={selected ? c.id === selected.id : i === 0}
                  onOpen={() => show(deviceId, c.id)}
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
              version={selected.lastMessage.messageId}
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
