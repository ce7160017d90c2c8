import type { Message } from './api';
import { idKind, nameOf } from './format';
import './recipient.css';

/**
 * An id named as format.ts's nameOf names it: its tag ("Group", "Channel") and its name, a long id
 * cut with an ellipsis (the whole id in the title) so it never widens a table or a list.
 */
export function IdLabel(props: { id: string; known?: { name?: string; phone?: string }; mono?: boolean }) {
  const n = nameOf(props.id, props.known);
  // A number or an id in the monospace font of ids (when the page's others are); a name, "Status", not.
  const isId = n.kind === 'phone' || n.kind === 'lid' || n.name === props.id;
  return (
    <span class="id-label" data-id-kind={n.kind}>
      {n.tag ? <span class="tag">{n.tag}</span> : null}{' '}
      <span class={`id-text${props.mono && isId ? ' mono' : ''}`} title={n.title}>
        {n.name}
      </span>
    </span>
  );
}

/**
 * Whom a message went to, readably: a group as "Group" with its subject (when known) and id; a
 * channel as "Channel"; the account's status updates as "Status"; a contact by its number when
 * the device knows it, else its LID, with the LID beneath, so a contact reads the same whichever
 * way it was addressed.
 */
export function Recipient(props: { m: Message }) {
  const { m } = props;
  // An inbound message (found by id): who wrote it, by the number or, without one, the LID.
  const address = m.to ?? m.from ?? m.contact?.phone ?? m.contact?.lid ?? '';
  const inbound = m.direction === 'inbound' ? <span class="tag">From</span> : null;
  const kind = idKind(address);
  if (m.chat?.type === 'group' || kind === 'group') {
    const id = m.chat?.id ?? address;
    return (
      <span class="recipient" data-recipient="group">
        <span class="tag">Group</span> {m.chat?.subject ? <strong>{m.chat.subject}</strong> : null}
        <span class="recipient-alt mono small id-text" title={id}>
          {id}
        </span>
        {inbound && address !== id ? (
          <span class="recipient-alt small">
            {inbound} <IdLabel id={address} known={{ phone: m.contact?.phone }} mono />
          </span>
        ) : null}
      </span>
    );
  }
  const lid = kind === 'lid' ? address : m.contact?.lid;
  const name = nameOf(address, { phone: m.contact?.phone }).name;
  return (
    <span class="recipient" data-recipient={kind}>
      {inbound} <IdLabel id={address} known={{ phone: m.contact?.phone }} mono />
      {lid && lid !== name ? (
        <span class="recipient-alt mono small id-text" title={lid}>
          LID {lid}
        </span>
      ) : null}
    </span>
  );
}

/** Whom a text or caption mentioned, as "@" chips (numbers with "+", LIDs as they are). */
export function Mentions(props: { m: Message }) {
  const mentions = props.m.mentions;
  if (!mentions?.length) return null;
  return (
    <span class="mentions" data-testid="mentions">
      {mentions.map((who) => (
        <span key={who} class="mention mono small">
          @{nameOf(who).name}
        </span>
      ))}
    </span>
  );
}
