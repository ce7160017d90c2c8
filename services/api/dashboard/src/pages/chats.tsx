import { useEffect, useState } from 'preact/hooks';
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

function ChatRow(props: { chat: Chat; selected: boolean; onOpen: () => void }) {
  const c = props.chat;
  const last = c.lastMessage;
  return (
    <li>
      <button
        type="button"
        class={`chat-row${props.selected ? ' selected' : ''}`}
        data-testid={`chat-${c.id}`}
        aria-current={props.selected ? 'true' : undefined}
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

/** One chat's messages, oldest at the top like a phone shows them; older pages on request. */
function ChatMessages(props: { deviceId: string; chat: Chat; version: unknown }) {
  const { deviceId, chat } = props;
  const [pages, setPages] = useState<{ messages: Message[]; nextCursor?: string } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const base = `/devices/${encodeURIComponent(deviceId)}/chats/${encodeURIComponent(chat.id)}/messages?limit=50`;
  useEffect(() => {
    api<{ messages: Message[]; nextCursor?: string }>(base)
      .then((p) => {
        setPages(p);
        setError(undefined);
      })
      .catch((err: Error) => setError(err.message));
  }, [deviceId, chat.id, props.version]);
  const older = async () => {
    if (!pages?.nextCursor) return;
    const p = await api<{ messages: Message[]; nextCursor?: string }>(`${base}&cursor=${pages.nextCursor}`);
    setPages({ messages: [...pages.messages, ...p.messages], nextCursor: p.nextCursor });
  };
  return (
    <section class="card chat-pane" aria-label={`Messages of ${chatName(chat)}`}>
      <h2>
        <IdLabel id={chat.id} known={known(chat)} />
      </h2>
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
          <ol class="bubbles">
            {[...pages.messages].reverse().map((m) => (
              <Bubble key={m.messageId} m={m} />
            ))}
          </ol>
        </>
      )}
    </section>
  );
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
  return (
    <>
      <div class="page-head">
        <div class="page-title">
          <h1>Chats</h1>
          {deviceId && <LiveIndicator state={chats.live} />}
        </div>
        <p class="muted">
          The conversations of a device, most recent first, from what the gateway recorded: what contacts
          wrote and what the device sent. Unread counts drop when messages are marked read through the API.
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
          <section class="card chat-list" aria-label="Chats">
            <ul>
              {list.map((c) => (
                <ChatRow key={c.id} chat={c} selected={c.id === open} onOpen={() => show(deviceId, c.id)} />
              ))}
            </ul>
          </section>
          {selected ? (
            <ChatMessages deviceId={deviceId} chat={selected} version={selected.lastMessage.messageId} />
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
