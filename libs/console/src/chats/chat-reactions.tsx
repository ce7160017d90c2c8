import { useEffect, useState } from 'preact/hooks';
import { api, type Message } from '../kit/api';
import { phone } from '../kit/format';
import { Banner, useDismiss } from '../kit/ui';
import { chatPath } from './chat-actions';

/** The reactions the menu offers, as WhatsApp's quick row has them, with their names. */
export const REACTIONS = [
  { emoji: '👍', name: 'thumbs up' },
  { emoji: '❤️', name: 'red heart' },
  { emoji: '😂', name: 'face with tears of joy' },
  { emoji: '😮', name: 'face with open mouth' },
  { emoji: '😢', name: 'crying face' },
  { emoji: '🙏', name: 'folded hands' },
] as const;

/** An emoji's name (one of the menu's), or the emoji itself. */
const nameOf = (emoji: string) => REACTIONS.find((r) => r.emoji === emoji)?.name ?? emoji;

/** Whether the operator may react to the message: a message of the chat, not a reaction, an edit or a delete. */
export const reactable = (m: Message) =>
  (m.direction === 'inbound' || m.direction === 'outbound') &&
  !m.reaction &&
  !m.revises &&
  !m.deletedAt &&
  m.status !== 'deleted' &&
  m.status !== 'failed';

/**
 * The account's current reaction on each message of the page, by its messageId: the newest of
 * our reaction messages to it that did not fail (`""`: removed). The messages come newest first.
 */
export function ourReactions(messages: Message[]): Map<string, { emoji: string; status: string }> {
  const out = new Map<string, { emoji: string; status: string }>();
  for (const m of messages) {
    if (!m.reaction || m.direction === 'inbound' || m.status === 'failed') continue;
    if (!out.has(m.reaction.messageId))
      out.set(m.reaction.messageId, { emoji: m.reaction.emoji, status: m.status });
  }
  return out;
}

/** The reactions on a bubble: the account's (`mine`, "" for none) and those contacts put on it. */
export function BubbleReactions(props: { m: Message; mine: string; pending: boolean }) {
  const theirs = (props.m.reactions ?? []).filter((r) => r.emoji);
  if (!props.mine && theirs.length === 0) return null;
  return (
    <ul class="bubble-reactions" aria-label="Reactions">
      {props.mine && (
        <li
          class="bubble-reaction mine"
          data-testid="my-reaction"
          data-emoji={props.mine}
          data-pending={props.pending || undefined}
          title={props.pending ? 'Your reaction (sending)' : 'Your reaction'}
        >
          <span aria-hidden="true">{props.mine}</span>
          <span class="visually-hidden">
            Your reaction: {nameOf(props.mine)}
            {props.pending ? ' (sending)' : ''}
          </span>
        </li>
      )}
      {theirs.map((r) => {
        const who = r.contact.phone ? phone(r.contact.phone) : (r.contact.lid ?? 'A contact');
        return (
          <li key={`${who}-${r.at}`} class="bubble-reaction" data-emoji={r.emoji} title={who}>
            <span aria-hidden="true">{r.emoji}</span>
            <span class="visually-hidden">
              {who} reacted {nameOf(r.emoji)}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * "React to this message": a button that opens the six quick reactions (and "Remove reaction"
 * when the account has one on it) under the bubble. Choosing sends the public /send's reaction
 * (`{ to: chatId, reaction: { messageId, emoji } }`, `emoji: ""` removes ours) through the
 * chat's reply route; Escape or a click elsewhere closes the menu.
 */
export function ReactButton(props: {
  deviceId: string;
  chatId: string;
  m: Message;
  mine: string;
  onReacted: (emoji: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const menuId = `react-menu-${props.m.messageId}`;
  const ref = useDismiss<HTMLDivElement>(open, () => setOpen(false), '.react-toggle');
  const toggle = () => ref.current?.querySelector<HTMLButtonElement>('.react-toggle');
  useEffect(() => {
    // The first choice, for the keyboard.
    if (open) ref.current?.ownerDocument.getElementById(menuId)?.querySelector('button')?.focus();
  }, [open]);
  const react = async (emoji: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await api(`${chatPath(props.deviceId, props.chatId)}/messages`, {
        json: { reaction: { messageId: props.m.messageId, emoji } },
      });
      setOpen(false);
      props.onReacted(emoji);
      toggle()?.focus();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="react" ref={ref}>
      <button
        type="button"
        class="link react-toggle small"
        aria-expanded={open}
        aria-controls={menuId}
        aria-label="React to this message"
        title="React to this message"
        onClick={() => setOpen(!open)}
      >
        React
      </button>
      {open && (
        <div class="react-menu" id={menuId} role="group" aria-label="Reactions to choose">
          {REACTIONS.map((r) => (
            <button
              key={r.emoji}
              type="button"
              class="react-choice"
              data-emoji={r.emoji}
              aria-label={`React with ${r.name}`}
              aria-pressed={props.mine === r.emoji}
              title={r.name}
              disabled={busy}
              onClick={() => void react(r.emoji)}
            >
              {r.emoji}
            </button>
          ))}
          {props.mine && (
            <button
              type="button"
              class="link small react-remove"
              disabled={busy}
              onClick={() => void react('')}
            >
              Remove reaction
            </button>
          )}
        </div>
      )}
      {error && <Banner kind="error">Could not react: {error}</Banner>}
    </div>
  );
}
