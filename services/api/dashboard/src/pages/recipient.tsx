import type { Message } from '../api';
import { phone } from '../format';

/**
 * Whom a message went to, readably: a group as "Group" with its subject (when known) and id; a
 * contact by the address the request named (a number, or a LID) with the other identity the
 * device knows for it beneath (its LID, or its number), so a contact reads the same whichever way
 * it was addressed.
 */
export function Recipient(props: { m: Message }) {
  const { m } = props;
  // An inbound message (found by id): who wrote it, by the number or, without one, the LID.
  const address = m.to ?? m.from ?? m.contact?.phone ?? m.contact?.lid ?? '';
  const inbound = m.direction === 'inbound' ? <span class="tag">From</span> : null;
  if (m.chat?.type === 'group' || address.endsWith('@g.us')) {
    const id = m.chat?.id ?? address;
    return (
      <span class="recipient" data-recipient="group">
        <span class="tag">Group</span> {m.chat?.subject ? <strong>{m.chat.subject}</strong> : null}
        <span class="recipient-alt mono small" title={id}>
          {id}
        </span>
        {inbound && address !== id ? (
          <span class="recipient-alt small">
            {inbound} <span class="mono">{phone(address)}</span>
          </span>
        ) : null}
      </span>
    );
  }
  const byLid = address.endsWith('@lid');
  const other = byLid ? m.contact?.phone : m.contact?.lid;
  return (
    <span class="recipient" data-recipient={byLid ? 'lid' : 'phone'}>
      {inbound} <span class="mono">{phone(address)}</span>
      {other ? (
        <span class="recipient-alt mono small" title={byLid ? 'Its number' : 'Its LID'}>
          {byLid ? phone(other) : `LID ${other}`}
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
          @{phone(who)}
        </span>
      ))}
    </span>
  );
}
