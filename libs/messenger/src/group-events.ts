/**
 * What changed in the account's groups, from WhatsApp's group notifications: Baileys turns each
 * into a stub message (`messageStubType` GROUP_…, with its parameters) before its `groups.update`
 * and `group-participants.update` events — and those lose changes (its event buffer keeps only the
 * first `groups.update` of a group per flush: an announce and a locked change told together come
 * out as the announce alone), so the changes are read from the stubs. One notice per change, with
 * who made it; a change the account made (through the API or on its phone) comes back the same
 * way, marked `byAccount`.
 */
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import {
  isGroupAddress,
  type ContactIdentity,
  type GroupChange,
  sameUser,
  USER_SERVER,
} from '@mgw/contracts';
import { participantContact, type GroupDirectory } from './groups.js';
import type { WASocket } from './socket.js';

export interface GroupChangeNotice {
  /** The group (`<id>@g.us`). */
  id: string;
  author?: ContactIdentity;
  byAccount: boolean;
  change: GroupChange;
}

const Stub = proto.WebMessageInfo.StubType;
type MemberAction = Extract<GroupChange, { type: 'participants' }>['action'];
const MEMBER_ACTIONS = new Map<number, MemberAction>([
  [Stub.GROUP_PARTICIPANT_ADD, 'joined'],
  [Stub.GROUP_PARTICIPANT_INVITE, 'joined'],
  [Stub.GROUP_PARTICIPANT_ADD_REQUEST_JOIN, 'joined'],
  [Stub.GROUP_PARTICIPANT_REMOVE, 'left'],
  [Stub.GROUP_PARTICIPANT_LEAVE, 'left'],
  [Stub.GROUP_PARTICIPANT_PROMOTE, 'promoted'],
  [Stub.GROUP_PARTICIPANT_DEMOTE, 'demoted'],
]);
const on = (value: string | undefined) => value === 'on' || value === 'true';

/** The change a group stub message tells, if it is one we report. */
function changeOf(type: number, params: string[]): GroupChange | undefined {
  const action = MEMBER_ACTIONS.get(type);
  if (action) {
    const participants = params.flatMap((p) => {
      try {
        const m = JSON.parse(p) as { id?: string; phoneNumber?: string; lid?: string };
        return [participantContact({ id: m.id ?? '', phoneNumber: m.phoneNumber, lid: m.lid })];
      } catch {
        return [];
      }
    });
    return participants.length ? { type: 'participants', action, participants } : undefined;
  }
  switch (type) {
    case Stub.GROUP_CHANGE_SUBJECT:
      return params[0] !== undefined ? { type: 'subject', subject: params[0] } : undefined;
    case Stub.GROUP_CHANGE_DESCRIPTION:
      return { type: 'description', ...(params[0] ? { description: params[0] } : {}) };
    case Stub.GROUP_CHANGE_ANNOUNCE:
      return { type: 'announce', announce: on(params[0]) };
    case Stub.GROUP_CHANGE_RESTRICT:
      return { type: 'locked', locked: on(params[0]) };
    // The new code is not told: whoever reads the events could join with it.
    case Stub.GROUP_CHANGE_INVITE_LINK:
      return { type: 'invite_revoked' };
    default:
      return undefined;
  }
}

/** The group changes among upserted messages (WhatsApp's group notifications, as stubs). */
export function groupChangesOf(messages: WAMessage[], own: OwnIds): GroupChangeNotice[] {
  const notices: GroupChangeNotice[] = [];
  for (const m of messages) {
    const id = m.key.remoteJid;
    if (!m.messageStubType || !id || !isGroupAddress(id)) continue;
    const change = changeOf(m.messageStubType, m.messageStubParameters ?? []);
    if (change) notices.push({ id, ...authorOf(m.key.participant ?? undefined, own), change });
  }
  return notices;
}

/** The account's own ids (phone and LID users), to tell its own changes. */
export type OwnIds = () => (string | undefined)[];

function authorOf(author: string | undefined, own: OwnIds): { author?: ContactIdentity; byAccount: boolean } {
  if (!author) return { byAccount: false };
  const contact = participantContact({ id: author });
  const ids = [contact.phone && `${contact.phone}@${USER_SERVER}`, contact.lid];
  const byAccount = own().some((me) => ids.some((id) => sameUser(me, id)));
  return { ...(contact.phone || contact.lid ? { author: contact } : {}), byAccount };
}

/**
 * WhatsApp names who made a change in the group's addressing, with the other id beside it; Baileys
 * keeps only the first (its message key has no field for the other), so the author's missing phone
 * or LID is looked up among the group's members: as cached before the change (`before`), among
 * the participants of the change, among the members any group showed before (an author may
 * have left by now), else asked of WhatsApp once (the cache refills with it).
 */
export async function completeAuthors(
  notices: GroupChangeNotice[],
  before: Map<string, ContactIdentity[] | undefined>,
  groups: Pick<GroupDirectory, 'metadata' | 'knownIdentity'>,
): Promise<GroupChangeNotice[]> {
  for (const notice of notices) {
    const author = notice.author;
    if (!author || (author.phone && author.lid)) continue;
    const changed = notice.change.type === 'participants' ? notice.change.participants : [];
    let found = find([...(before.get(notice.id) ?? []), ...changed], author) ?? groups.knownIdentity(author);
    if (!found) {
      const meta = await groups.metadata(notice.id).catch(() => undefined);
      found = find(meta?.participants.map(participantContact) ?? [], author);
    }
    if (found) notice.author = { ...found, ...author };
  }
  return notices;
}

function find(members: ContactIdentity[], who: ContactIdentity): ContactIdentity | undefined {
  return members.find((m) => (who.lid && m.lid === who.lid) || (who.phone && m.phone === who.phone));
}

/**
 * Keeps the group cache current with WhatsApp's group notifications and hands each change, its
 * author completed, to `tell` — in WhatsApp's order, though an author's lookup may ask WhatsApp.
 */
export function watchGroupChanges(
  sock: WASocket,
  groups: GroupDirectory,
  tell: (notices: GroupChangeNotice[]) => void,
): void {
  const own = () => [sock.user?.id, sock.user?.lid];
  let told = Promise.resolve();
  sock.ev.on('messages.upsert', ({ messages }) => {
    const notices = groupChangesOf(messages, own);
    if (!notices.length) return;
    // The members as cached now: a change drops the entry (below), but who made it is there.
    const before = new Map(notices.map((n) => [n.id, groups.cachedMembers(n.id)]));
    told = told
      .then(() => completeAuthors(notices, before, groups))
      .then(tell)
      .catch(() => undefined);
  });
  sock.ev.on('groups.upsert', (created) => groups.onChange(created));
  sock.ev.on('groups.update', (updates) => groups.onChange(updates));
  sock.ev.on('group-participants.update', ({ id }) => groups.onChange([{ id }]));
}

/**
 * Group messages get their group's subject (from the group cache; a group not cached is asked
 * once); a subject that cannot be had leaves the message as it is (`onError`).
 */
export async function withGroupSubjects<T extends { chat?: { id: string; subject?: string } }>(
  groups: Pick<GroupDirectory, 'metadata'>,
  messages: T[],
  onError: (err: unknown) => void,
): Promise<T[]> {
  for (const m of messages) {
    if (!m.chat) continue;
    try {
      const subject = (await groups.metadata(m.chat.id)).subject;
      if (subject) m.chat = { ...m.chat, subject };
    } catch (err) {
      onError(err);
    }
  }
  return messages;
}
