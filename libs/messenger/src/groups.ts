/**
 * The device's groups: a metadata cache Baileys reads before every group send
 * (`cachedGroupMetadata`), so a send does not ask WhatsApp for the group's members each time. It
 * fills from the first query of a group (or the list of all groups) and follows WhatsApp's group
 * notifications: a participant, subject or setting change drops the group's entry, and the next
 * need asks once. Entries also expire after a while, in case a notification was missed.
 */
import { type GroupMetadata, type GroupParticipant as BaileysParticipant } from '@whiskeysockets/baileys';
import {
  groupChangeReason,
  inviteLinkOf,
  memberJid,
  type GroupInvite,
  type GroupUpdateBody,
  type ContactIdentity,
  type GroupAction,
  type GroupDetail,
  type GroupParticipantOutcome,
  type GroupSummary,
  isLidAddress,
  phoneOfJid,
  sameUser,
  userOfJid,
  USER_SERVER,
} from '@mgw/contracts';
import { createGroup, updateGroupParticipants } from './privacy-tokens.js';
import type { WASocket } from './socket.js';

/** How long a cached group is trusted without a notification (a missed one heals after this). */
const ENTRY_TTL_MS = 6 * 60 * 60_000;
/** Groups kept per device; the least recently used goes first. */
const MAX_ENTRIES = 5_000;
/** Members' identities remembered (by phone and by LID, so twice per member), least recent first out. */
const MAX_IDENTITY_KEYS = 20_000;

/** The account may not write to the group (not a member, or only admins may and it is not one). */
export class NotAllowedInGroupError extends Error {
  override name = 'NotAllowedInGroupError';
}

/** The change needs an admin of the group and the account is not one (WhatsApp would answer 401). */
export class NotGroupAdminError extends Error {
  override name = 'NotGroupAdminError';
}

export class GroupDirectory {
  private readonly entries = new Map<string, { meta: GroupMetadata; at: number }>();
  private readonly inFlight = new Map<string, Promise<GroupMetadata>>();
  /**
   * Counts the changes told: a query answered before a change it raced with must not fill the
   * cache after the change dropped the entry (it would hold the old members for hours).
   */
  private changes = 0;
  /**
   * Every member's phone and LID as the cached groups showed them, kept when a change drops the
   * entry: who made a change may have left the group before its author is looked up.
   */
  private readonly identities = new Map<string, ContactIdentity>();

  constructor(
    private readonly socket: () => WASocket | undefined,
    private readonly onQuery: (kind: 'group' | 'all') => void = () => undefined,
  ) {}

  /** Baileys' `cachedGroupMetadata`: the cached entry, or undefined (Baileys then asks itself). */
  cached(jid: string): GroupMetadata | undefined {
    const hit = this.entries.get(jid);
    if (!hit) return undefined;
    if (Date.now() - hit.at > ENTRY_TTL_MS) {
      this.entries.delete(jid);
      return undefined;
    }
    // least recently used last
    this.entries.delete(jid);
    this.entries.set(jid, hit);
    return hit.meta;
  }

  /** The group's metadata: cached, or asked of WhatsApp once (concurrent askers share the query). */
  async metadata(jid: string): Promise<GroupMetadata> {
    const hit = this.cached(jid);
    if (hit) return hit;
    const pending = this.inFlight.get(jid);
    if (pending) return pending;
    const seen = this.changes;
    const query = (async () => {
      this.onQuery('group');
      const meta = await this.requireSocket().groupMetadata(jid);
      if (this.changes === seen) this.put(meta);
      return meta;
    })().finally(() => {
      if (this.inFlight.get(jid) === query) this.inFlight.delete(jid);
    });
    this.inFlight.set(jid, query);
    return query;
  }

  /** Every group the account is in (one query), cached. */
  async all(): Promise<GroupSummary[]> {
    this.onQuery('all');
    const sock = this.requireSocket();
    const groups = await sock.groupFetchAllParticipating();
    const list = Object.values(groups);
    for (const meta of list) this.put(meta);
    return list.map((meta) => summaryOf(meta, sock)).sort((a, b) => a.id.localeCompare(b.id));
  }

  async detail(jid: string): Promise<GroupDetail> {
    const meta = await this.metadata(jid);
    return detailOf(meta, this.requireSocket());
  }

  /** Throws NotAllowedInGroupError when the account may not write to the group now. */
  async assertMaySend(jid: string): Promise<void> {
    let meta: GroupMetadata;
    try {
      meta = await this.metadata(jid);
    } catch (err) {
      // WhatsApp answers 403/404 for a group the account is not in (any more).
      const status = whatsappErrorCode(err);
      if (status === 403 || status === 404 || status === 401)
        throw new NotAllowedInGroupError('the account is not a member of the group');
      throw err;
    }
    const me = meOf(meta, this.requireSocket());
    if (!me) throw new NotAllowedInGroupError('the account is not a member of the group');
    if (meta.announce && !me.admin) throw new NotAllowedInGroupError('only admins may send to the group');
  }

  async create(
    subject: string,
    participants: string[],
  ): Promise<{ group: GroupDetail; participants: GroupParticipantOutcome[] }> {
    const sock = this.requireSocket();
    // Baileys' groupCreate, with each participant's privacy token (whatsmeow 00ce57f2).
    const meta = await createGroup(sock, subject, participants.map(memberJid));
    this.put(meta);
    const group = detailOf(meta, sock);
    const outcomes = participants.map((p): GroupParticipantOutcome => {
      const there = meta.participants.some((m) => sameMember(m, p));
      return there ? { participant: p, ok: true } : { participant: p, ok: false, reason: 'failed' };
    });
    return { group, participants: outcomes };
  }

  async change(jid: string, action: GroupAction, participants: string[]): Promise<GroupParticipantOutcome[]> {
    const sock = this.requireSocket();
    // Baileys' groupParticipantsUpdate; an add with each participant's privacy token (whatsmeow 00ce57f2).
    const answers = await updateGroupParticipants(sock, jid, participants.map(memberJid), action);
    this.entries.delete(jid);
    return participants.map((p): GroupParticipantOutcome => {
      const answer = answers.find((a) => answerIds(a).some((id) => isEntry(id, p)));
      if (!answer) return { participant: p, ok: false, reason: 'failed' };
      const reason = groupChangeReason(answer.status, action);
      return reason
        ? { participant: p, ok: false, reason, code: answer.status }
        : { participant: p, ok: true };
    });
  }

  /**
   * Changes the group's subject, description and settings, in that order, then reads it again.
   * Refused before anything changes when the account is not an admin and the change needs one
   * (settings always; subject and description while the group is locked): a partial change is
   * what a refusal by WhatsApp in the middle would leave.
   */
  async update(jid: string, changes: GroupUpdateBody): Promise<GroupDetail> {
    const sock = this.requireSocket();
    const meta = await this.metadata(jid);
    const me = meOf(meta, sock);
    if (!me) throw Object.assign(new Error('the account is not a member of the group'), { data: 403 });
    const needsAdmin = changes.announce !== undefined || changes.locked !== undefined || !!meta.restrict;
    if (needsAdmin && !me.admin) throw new NotGroupAdminError('only an admin of the group may do this');
    try {
      if (changes.subject !== undefined) await sock.groupUpdateSubject(jid, changes.subject);
      if (changes.description !== undefined)
        await sock.groupUpdateDescription(jid, changes.description || undefined);
      if (changes.announce !== undefined)
        await sock.groupSettingUpdate(jid, changes.announce ? 'announcement' : 'not_announcement');
      if (changes.locked !== undefined)
        await sock.groupSettingUpdate(jid, changes.locked ? 'locked' : 'unlocked');
    } finally {
      this.entries.delete(jid);
    }
    return this.detail(jid);
  }

  /** The group's invite link (an admin's); `revoke` replaces it, and the old one stops working. */
  async invite(jid: string, revoke: boolean): Promise<GroupInvite> {
    const sock = this.requireSocket();
    const code = revoke ? await sock.groupRevokeInvite(jid) : await sock.groupInviteCode(jid);
    if (!code) throw new Error('WhatsApp answered no invite code');
    return { id: jid, code, link: inviteLinkOf(code) };
  }

  /** Joins the group of an invite code; answers the group. */
  async join(code: string): Promise<GroupDetail> {
    const jid = await this.requireSocket().groupAcceptInvite(code);
    if (!jid) throw new Error('WhatsApp answered no group for the invite');
    this.entries.delete(jid);
    return this.detail(jid);
  }

  async leave(jid: string): Promise<void> {
    await this.requireSocket().groupLeave(jid);
    this.entries.delete(jid);
  }

  /** A group notification: the entry is replaced (full metadata) or dropped (a change). */
  onChange(updates: Array<Partial<GroupMetadata> & { id?: string }>): void {
    for (const update of updates) {
      if (!update.id) continue;
      this.changes += 1;
      // A query in flight may predate the change: the next asker asks again.
      this.inFlight.delete(update.id);
      if (Array.isArray(update.participants) && update.subject !== undefined)
        this.put(update as GroupMetadata);
      else this.entries.delete(update.id);
    }
  }

  /** The members' identities as cached now (no query, no change to the order of use). */
  cachedMembers(jid: string): ContactIdentity[] | undefined {
    return this.entries.get(jid)?.meta.participants.map(participantContact);
  }

  /** A member's phone and LID, as some group showed them before (no query). */
  knownIdentity(who: ContactIdentity): ContactIdentity | undefined {
    return (
      (who.lid && this.identities.get(who.lid)) || (who.phone && this.identities.get(who.phone)) || undefined
    );
  }

  /** Drops every entry (a new socket may belong to a re-linked account). */
  clear(): void {
    this.entries.clear();
    this.identities.clear();
  }

  private put(meta: GroupMetadata): void {
    this.entries.delete(meta.id);
    this.entries.set(meta.id, { meta, at: Date.now() });
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    for (const member of meta.participants) {
      const identity = participantContact(member);
      if (!identity.phone || !identity.lid) continue;
      for (const key of [identity.phone, identity.lid]) {
        this.identities.delete(key);
        this.identities.set(key, identity);
      }
    }
    while (this.identities.size > MAX_IDENTITY_KEYS)
      this.identities.delete(this.identities.keys().next().value!);
  }

  private requireSocket(): WASocket {
    const sock = this.socket();
    if (!sock) throw new Error('the device socket is not open');
    return sock;
  }
}

/** WhatsApp's error code of a failed query (Baileys puts it in the Boom's `data`), if any. */
export function whatsappErrorCode(err: unknown): number | undefined {
  const e = err as { data?: unknown; output?: { statusCode?: number } } | undefined;
  if (typeof e?.data === 'number') return e.data;
  return e?.output?.statusCode;
}

/** A participant's identity from what WhatsApp says of it (its id, phone number and LID). */
export function participantContact(
  p: Pick<BaileysParticipant, 'id' | 'phoneNumber' | 'lid'>,
): ContactIdentity {
  const ids = [p.id, p.phoneNumber, p.lid].filter((j): j is string => typeof j === 'string');
  const phone = ids.map(phoneOfJid).find((user) => !!user);
  const lidUser = userOfJid(ids.find(isLidAddress));
  return { ...(phone ? { phone } : {}), ...(lidUser ? { lid: `${lidUser}@lid` } : {}) };
}

function meOf(meta: GroupMetadata, sock: WASocket): BaileysParticipant | undefined {
  const mine = [sock.user?.id, sock.user?.lid].filter((j): j is string => !!j);
  return meta.participants.find((p) => {
    const c = participantContact(p);
    const ids = [c.phone && `${c.phone}@${USER_SERVER}`, c.lid];
    return mine.some((me) => ids.some((id) => sameUser(me, id)));
  });
}

function summaryOf(meta: GroupMetadata, sock: WASocket): GroupSummary {
  return {
    id: meta.id,
    subject: meta.subject ?? '',
    size: meta.size ?? meta.participants.length,
    announce: !!meta.announce,
    isAdmin: !!meOf(meta, sock)?.admin,
  };
}

function detailOf(meta: GroupMetadata, sock: WASocket): GroupDetail {
  return {
    ...summaryOf(meta, sock),
    ...(meta.desc ? { description: meta.desc } : {}),
    locked: !!meta.restrict,
    participants: meta.participants.map((p) => ({ contact: participantContact(p), admin: !!p.admin })),
  };
}

function sameMember(p: BaileysParticipant, entry: string): boolean {
  const c = participantContact(p);
  return isLidAddress(entry) ? sameUser(c.lid, entry) : c.phone === entry;
}

/**
 * Every id an answer to a participant change names the participant by: its `jid`, and the id
 * beside it — a LID-addressed group answers by LID with `phone_number` beside it (Baileys issue
 * #1842), a phone-addressed one by phone, maybe with `lid`. A request by phone must find the
 * answer given by LID, and the other way round.
 */
function answerIds(answer: { jid?: string; content?: { attrs?: Record<string, string> } }): string[] {
  const attrs = answer.content?.attrs ?? {};
  return [answer.jid, attrs.phone_number, attrs.lid].filter(
    (j): j is string => typeof j === 'string' && j !== '',
  );
}

/** Whether `jid` names a request's entry (`<digits>@lid`, or a phone's digits). */
function isEntry(jid: string, entry: string): boolean {
  return sameUser(jid, isLidAddress(entry) ? entry : `${entry}@${USER_SERVER}`);
}
