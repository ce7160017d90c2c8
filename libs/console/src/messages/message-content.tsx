import type { Message } from '../kit/api';
import { exact } from '../kit/format';
import { Mentions } from '../kit/recipient';
import './messages.css';

/** How much of a text the table shows (the whole text is in the cell's title). */
const SHOWN_CHARS = 80;

/** The text's first SHOWN_CHARS, ending at a space rather than mid-word ("ATTAC…") when one is near. */
function cut(text: string): string {
  if (text.length <= SHOWN_CHARS) return text;
  const head = text.slice(0, SHOWN_CHARS);
  const space = head.lastIndexOf(' ');
  return `${space > SHOWN_CHARS / 2 ? head.slice(0, space) : head}…`;
}

/** A poll's votes per option, whichever shape the record's tally has. */
function votesOf(poll: NonNullable<Message['poll']>): Map<string, number> {
  const votes = new Map<string, number>();
  const tally = poll.tally;
  if (Array.isArray(tally)) for (const t of tally) votes.set(t.option, t.votes);
  else if (tally) for (const [option, n] of Object.entries(tally)) votes.set(option, n);
  return votes;
}

/**
 * What a message is, readably, from the fields its view carries (the same names as POST /send):
 * a text (an outbound one as its recipient got it, personalised; its current text when edited,
 * with the edit count), an attachment (its kind, name and caption), a reaction, a location, contact
 * cards, a poll with its votes, a message deleted for everyone, or an edit or a delete of ours (the
 * message it changes, an edit's new text; the target's row shows the result too). A message with
 * no content to show — an OTP (its code is never shown), a message whose content expired — shows
 * "—".
 */
export function MessageContent(props: { m: Message }) {
  const m = props.m;
  const kind = contentKind(m);
  return (
    <div class="msg-content" data-kind={kind}>
      <span class="msg-content-kind">{KIND_LABEL[kind]}</span> <ContentDetail m={m} kind={kind} />
      <Mentions m={m} />
    </div>
  );
}

type Kind =
  | 'edit'
  | 'delete'
  | 'deleted'
  | 'reaction'
  | 'location'
  | 'contacts'
  | 'poll'
  | 'attachment'
  | 'text'
  | 'none';

const KIND_LABEL: Record<Kind, string> = {
  edit: 'Edit',
  delete: 'Delete',
  deleted: 'Deleted',
  reaction: 'Reaction',
  location: 'Location',
  contacts: 'Contacts',
  poll: 'Poll',
  attachment: 'Attachment',
  text: 'Text',
  none: '—',
};

function contentKind(m: Message): Kind {
  if (m.revises) return m.revises.action;
  if (m.status === 'deleted' || m.deletedAt) return 'deleted';
  if (m.reaction) return 'reaction';
  if (m.location) return 'location';
  if (m.contacts?.length) return 'contacts';
  if (m.poll) return 'poll';
  if (m.attachment) return 'attachment';
  if (m.text !== undefined || m.edits?.length) return 'text';
  return 'none';
}

function ContentDetail(props: { m: Message; kind: Kind }) {
  const { m, kind } = props;
  switch (kind) {
    case 'edit':
    case 'delete': {
      const r = m.revises!;
      return (
        <span title={r.text}>
          <span class="muted small">of </span>
          <span class="mono small">{r.messageId.slice(0, 8)}</span>
          {r.text !== undefined ? <span data-testid="message-text">: {cut(r.text)}</span> : null}
        </span>
      );
    }
    case 'deleted':
      return <span class="muted small">for everyone{m.deletedAt ? `, ${exact(m.deletedAt)}` : ''}</span>;
    case 'reaction':
      return m.reaction!.emoji ? (
        <span>
          <span class="emoji">{m.reaction!.emoji}</span>{' '}
          <span class="muted small mono">to {m.reaction!.messageId.slice(0, 8)}</span>
        </span>
      ) : (
        <span class="muted small">removed from {m.reaction!.messageId.slice(0, 8)}</span>
      );
    case 'location': {
      const l = m.location!;
      return (
        <span>
          {l.name ? <strong>{l.name}</strong> : null}
          {l.address ? ` ${l.address}` : ''}{' '}
          <span class="muted small mono">
            {l.latitude.toFixed(5)}, {l.longitude.toFixed(5)}
          </span>
        </span>
      );
    }
    case 'contacts':
      return (
        <span>
          {m.contacts!.map((c, i) => (
            <span key={i} class="contact-card">
              <strong>{c.name}</strong> <span class="muted small mono">{c.phones.join(', ')}</span>
              {c.organization ? <span class="muted small"> · {c.organization}</span> : null}
            </span>
          ))}
        </span>
      );
    case 'poll': {
      const p = m.poll!;
      const votes = votesOf(p);
      return (
        <span>
          <strong>{p.question}</strong>
          {p.multiple ? <span class="muted small"> (several answers)</span> : null}
          <ul class="poll-options">
            {p.options.map((o) => (
              <li key={o}>
                {o}
                {votes.size > 0 ? <span class="muted small"> — {votes.get(o) ?? 0}</span> : null}
              </li>
            ))}
          </ul>
        </span>
      );
    }
    case 'attachment': {
      const a = m.attachment!;
      const words = [a.caption, m.text].filter((t): t is string => Boolean(t));
      return (
        <span title={words.join('\n\n') || undefined}>
          <span class="msg-media" data-media={a.type}>
            {a.type}
          </span>
          {a.fileName ? ` ${a.fileName}` : ''}
          {words.map((t, i) => (
            <span key={i} class="muted" data-testid={i === 0 && a.caption ? 'caption' : undefined}>
              {' '}
              · {cut(t)}
            </span>
          ))}
          {m.textTruncated ? <span class="muted small"> (shortened)</span> : null}
        </span>
      );
    }
    case 'text':
      return (
        <span title={m.text} data-testid="message-text">
          {cut(m.text ?? '')}
          {m.textTruncated ? <span class="muted small"> (shortened)</span> : null}
          {m.edits?.length ? (
            <span class="muted small" title={m.edits.map((e) => `${exact(e.at)}: ${e.text}`).join('\n')}>
              {' '}
              (edited{m.edits.length > 1 ? ` ×${m.edits.length}` : ''})
            </span>
          ) : null}
        </span>
      );
    case 'none':
      return null;
  }
}
