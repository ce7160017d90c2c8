/**
 * The device's groups: a metadata cache Baileys reads before every group send
 * (`cachedGroupMetadata`), so a send does not ask WhatsApp for the group's members each time. It
 * fills from the first query of a group (or the list of all groups) and follows WhatsApp's group
 * notifications: a participant, subject or setting change drops the group's entry, and the next
 * need asks once. Entries also expire after a while, in case a notification was missed.
 */
import {
  jidDecode,
  type GroupMetadata,
  type GroupParticipant as BaileysParticipant,
} from '@whiskeysockets/baileys';
import {
  groupChangeReason,
  memberJid,
  type ContactIdentity,
  type GroupAction,
  type GroupDetail,
  type GroupParticipantOutcome,
  type GroupSummary,
} from '@mgw/contracts';
import type { WASocket } from './socket.js';

/** How long a cached group is trusted without a notification (a missed one heals after this). */
const ENTRY_TTL_MS = 6 * 60 * 60_000;
/** Groups kept per device; the least recently used goes first. */
const MAX_ENTRIES = 5_000;

/** The account may not write to the group (not a member, or only admins may and it is not one). */
export class NotAllowedInGroupError extends Error {
  override name = 'NotAllowedInGroupError';
}

export class GroupDirectory {
  private readonly entries = new Map<string, { meta: GroupMetadata; at: number }>();
  private readonly inFlight = new Map<string, Promise<GroupMetadata>>();

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
    const query = (async () => {
      this.onQuery('group');
      const meta = await this.requireSocket().groupMetadata(jid);
      this.put(meta);
      return meta;
    })().finally(() => this.inFlight.delete(jid));
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
    const meta = await sock.groupCreate(subject, participants.map(memberJid));
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
    const answers = await sock.groupParticipantsUpdate(jid, participants.map(memberJid), action);
    this.entries.delete(jid);
    return participants.map((p): GroupParticipantOutcome => {
      const answer = answers.find((a) => a.jid && sameUser(a.jid, p));
      if (!answer) return { participant: p, ok: false, reason: 'failed' };
      const reason = groupChangeReason(answer.status, action);
      return reason
        ? { participant: p, ok: false, reason, code: answer.status }
        : { participant: p, ok: true };
    });
  }

  async leave(jid: string): Promise<void> {
    await this.requireSocket().groupLeave(jid);
    this.entries.delete(jid);
  }

  /** A group notification: the entry is replaced (full metadata) or dropped (a change). */
  onChange(updates: Array<Partial<GroupMetadata> & { id?: string }>): void {
    for (const update of updates) {
      if (!update.id) continue;
      if (Array.isArray(update.participants) && update.subject !== undefined)
        this.put(update as GroupMetadata);
      else this.entries.delete(update.id);
    }
  }

  /** Drops every entry (a new socket may belong to a re-linked account). */
  clear(): void {
    this.entries.clear();
  }

  private put(meta: GroupMetadata): void {
    this.entries.delete(meta.id);
    this.entries.set(meta.id, { meta, at: Date.now() });
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
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
  const pn = ids.find((j) => j.endsWith('@s.whatsapp.net'));
  const lid = ids.find((j) => j.endsWith('@lid'));
  const phone = pn ? jidDecode(pn)?.user : undefined;
  const lidUser = lid ? jidDecode(lid)?.user : undefined;
  return { ...(phone ? { phone } : {}), ...(lidUser ? { lid: `${lidUser}@lid` } : {}) };
}

function meOf(meta: GroupMetadata, sock: WASocket): BaileysParticipant | undefined {
  const mine = [sock.user?.id, sock.user?.lid].filter((j): j is string => !!j).map((j) => jidDecode(j)?.user);
  return meta.participants.find((p) => {
    const c = participantContact(p);
    return mine.includes(c.phone) || mine.includes(c.lid?.replace(/@lid$/, ''));
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
    participants: meta.participants.map((p) => ({ contact: participantContact(p), admin: !!p.admin })),
  };
}

function sameMember(p: BaileysParticipant, entry: string): boolean {
  const c = participantContact(p);
  return entry.endsWith('@lid') ? c.lid === entry : c.phone === entry;
}

function sameUser(jid: string, entry: string): boolean {
  const user = jidDecode(jid)?.user;
  return user !== undefined && user === entry.replace(/@lid$/, '');
}
