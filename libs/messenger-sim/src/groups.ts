/**
 * Group chats of the simulated network: metadata (the `w:g2` queries a client makes, counted per
 * group), creation, and participant changes with their `w:gp2` notifications to every linked device
 * of the members. Messages both ways, with sender-key encryption, are in group-messages.ts.
 */
import { randomInt } from 'node:crypto';
import { jidDecode, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import { newStanzaId, unixSeconds, type ClientConnection } from './client-connection.js';
import { normalizePhone, type SimUser } from './directory.js';
import type { Simulator } from './simulator.js';
import { SimError } from './sim-error.js';
import { childrenNamed, firstChild, iqError, iqResult, node } from './stanza.js';

export type GroupRole = 'member' | 'admin' | 'superadmin';

export interface SimGroup {
  /** The id's user part (`<id>@g.us`). */
  id: string;
  subject: string;
  description?: string;
  announce: boolean;
  creation: number;
  creator: string;
  /** Members by phone, in joining order. */
  members: Map<string, GroupRole>;
  /** How the group names its members: by phone number, or by LID (with the phone beside it). */
  addressing: 'pn' | 'lid';
}

export interface GroupView {
  id: string;
  subject: string;
  description?: string;
  announce: boolean;
  addressing: 'pn' | 'lid';
  participants: { phone: string; lid: string; role: GroupRole }[];
  /** How many `w:g2` metadata queries clients made for this group. */
  metadataQueries: number;
}

export interface CreateGroupInput {
  subject: string;
  /** The members' phones; the first is the creator (a superadmin). */
  members: string[];
  admins?: string[];
  description?: string;
  announce?: boolean;
  /** @defaultValue 'pn' */
  addressing?: 'pn' | 'lid';
}

const MAX_GROUP_MEMBERS = 1024;
const MAX_SUBJECT = 100;

/** A member's sender keys (its own, and those other senders gave it), by sender key name. */
const groupJid = (group: SimGroup) => jidEncode(group.id, 'g.us');
export const pnJid = (user: SimUser) => jidEncode(user.phone, 's.whatsapp.net');

export class SimGroups {
  private readonly groups = new Map<string, SimGroup>();
  private readonly queries = new Map<string, number>();
  /** `participating` queries (all groups at once) per account. */
  private readonly listQueries = new Map<string, number>();

  constructor(private readonly sim: Simulator) {}

  get(id: string): SimGroup | undefined {
    return this.groups.get(id.replace(/@g\.us$/, ''));
  }

  require(id: string): SimGroup {
    const group = this.get(id);
    if (!group) throw new SimError(`unknown group ${id}`, 404);
    return group;
  }

  ofMember(phone: string): SimGroup[] {
    return [...this.groups.values()].filter((g) => g.members.has(phone));
  }

  create(input: CreateGroupInput): GroupView {
    const subject = typeof input.subject === 'string' ? input.subject.trim() : '';
    if (!subject || subject.length > MAX_SUBJECT)
      throw new SimError(`subject is required (1-${MAX_SUBJECT} characters)`, 400);
    if (!Array.isArray(input.members) || input.members.length < 1 || input.members.length > MAX_GROUP_MEMBERS)
      throw new SimError(`members must list 1 to ${MAX_GROUP_MEMBERS} phones`, 400);
    const users = input.members.map((p) => this.userOf(String(p)));
    const id = `120363${String(randomInt(0, 1e9)).padStart(9, '0')}${String(randomInt(0, 1e6)).padStart(6, '0')}`;
    const admins = new Set((input.admins ?? []).map((p) => normalizePhone(String(p))));
    const group: SimGroup = {
      id,
      subject,
      ...(input.description ? { description: String(input.description) } : {}),
      announce: input.announce === true,
      creation: Math.floor(Date.now() / 1000),
      creator: users[0]!.phone,
      members: new Map(),
      addressing: input.addressing === 'lid' ? 'lid' : 'pn',
    };
    users.forEach((u, i) =>
      group.members.set(u.phone, i === 0 ? 'superadmin' : admins.has(u.phone) ? 'admin' : 'member'),
    );
    this.groups.set(id, group);
    return this.view(group);
  }

  /** Announce on or off: only admins may write while it is on. */
  setAnnounce(id: string, announce: boolean): GroupView {
    const group = this.require(id);
    group.announce = announce;
    return this.view(group);
  }

  view(group: SimGroup): GroupView {
    return {
      id: groupJid(group),
      subject: group.subject,
      ...(group.description ? { description: group.description } : {}),
      announce: group.announce,
      addressing: group.addressing,
      participants: [...group.members].map(([phone, role]) => ({
        phone,
        lid: jidEncode(this.sim.directory.get(phone)?.lid ?? '', 'lid'),
        role,
      })),
      metadataQueries: this.queries.get(group.id) ?? 0,
    };
  }

  /** How many `participating` queries (the account's groups at once) the account's devices made. */
  listQueriesOf(phone: string): number {
    return this.listQueries.get(normalizePhone(phone)) ?? 0;
  }

  countQuery(group: SimGroup): void {
    this.queries.set(group.id, (this.queries.get(group.id) ?? 0) + 1);
  }

  countListQuery(phone: string): void {
    this.listQueries.set(phone, (this.listQueries.get(phone) ?? 0) + 1);
  }

  /** May `phone` write to the group? A member, and an admin while only admins may write. */
  maySend(group: SimGroup, phone: string): boolean {
    const role = group.members.get(phone);
    return role !== undefined && (!group.announce || role !== 'member');
  }

  /** The metadata node a client parses (extractGroupMetadata), PN-addressed with each member's LID. */
  metadataNode(group: SimGroup): BinaryNode {
    const children: BinaryNode[] = [...group.members].map(([phone, role]) => {
      const user = this.sim.directory.get(phone);
      const pn = jidEncode(phone, 's.whatsapp.net');
      const lid = user ? jidEncode(user.lid, 'lid') : undefined;
      const ids: Record<string, string> =
        group.addressing === 'lid' && lid
          ? { jid: lid, phone_number: pn }
          : { jid: pn, ...(lid ? { lid } : {}) };
      return node('participant', { ...ids, ...(role !== 'member' ? { type: role } : {}) });
    });
    if (group.description !== undefined)
      children.push(
        node('description', { id: group.id }, [node('body', {}, Buffer.from(group.description, 'utf8'))]),
      );
    if (group.announce) children.push(node('announcement', {}));
    return node(
      'group',
      {
        id: group.id,
        subject: group.subject,
        s_t: String(group.creation),
        creation: String(group.creation),
        creator: jidEncode(group.creator, 's.whatsapp.net'),
        size: String(group.members.size),
        addressing_mode: group.addressing,
      },
      children,
    );
  }

  /** A participant change, as the acting account asked it; answers each participant's outcome. */
  change(
    group: SimGroup,
    actor: string,
    action: 'add' | 'remove' | 'promote' | 'demote',
    phones: string[],
  ): { phone: string; error?: string }[] {
    const isAdmin = (group.members.get(actor) ?? 'member') !== 'member';
    return phones.map((phone) => {
      if (!isAdmin) return { phone, error: '401' };
      const role = group.members.get(phone);
      if (action === 'add') {
        if (role !== undefined) return { phone, error: '409' };
        const user = this.sim.directory.lookupOrCreate(phone);
        if (!user) return { phone, error: '404' };
        if (group.members.size >= MAX_GROUP_MEMBERS) return { phone, error: '500' };
        group.members.set(user.phone, 'member');
        return { phone };
      }
      if (role === undefined) return { phone, error: '404' };
      if (role === 'superadmin' && action !== 'promote') return { phone, error: '403' };
      if (action === 'remove') group.members.delete(phone);
      else if (role !== 'superadmin') group.members.set(phone, action === 'promote' ? 'admin' : 'member');
      return { phone };
    });
  }

  /** Tells every linked device of the group's members (and of `also`) what changed. */
  notify(group: SimGroup, actor: string, child: BinaryNode, also: string[] = []): void {
    const phones = new Set([...group.members.keys(), ...also]);
    for (const phone of phones) {
      const user = this.sim.directory.get(phone);
      if (!user) continue;
      for (const device of user.devices.values()) {
        this.sim.deliverToDevice(
          device,
          node(
            'notification',
            {
              from: groupJid(group),
              type: 'w:gp2',
              id: newStanzaId(),
              participant: jidEncode(actor, 's.whatsapp.net'),
              t: unixSeconds(),
            },
            [child],
          ),
        );
      }
    }
  }

  private userOf(phone: string): SimUser {
    const user = this.sim.directory.lookupOrCreate(phone);
    if (!user) throw new SimError(`${phone} is not on WhatsApp`, 404);
    return user;
  }
}

/** `w:g2` iqs: a group's metadata, the account's groups, create, participant changes, leave. */
export function handleGroupIq(sim: Simulator, conn: ClientConnection, iq: BinaryNode): void {
  const account = conn.account;
  const child = firstChild(iq);
  if (!account || !child) return conn.send(iqError(iq, 400, 'bad-request'));
  const groups = sim.groups;
  const to = iq.attrs.to ?? '';
  if (child.tag === 'participating') {
    groups.countListQuery(account.phone);
    const list = groups.ofMember(account.phone).map((g) => groups.metadataNode(g));
    return conn.send(iqResult(iq, [node('groups', {}, list)]));
  }
  if (child.tag === 'create') {
    const phones = childrenNamed(child, 'participant')
      .map((p) => jidDecode(p.attrs.jid ?? '')?.user)
      .filter((p): p is string => !!p);
    try {
      const view = groups.create({
        subject: child.attrs.subject ?? '',
        members: [account.phone, ...phones.filter((p) => p !== account.phone)],
      });
      const group = groups.require(view.id);
      groups.notify(group, account.phone, node('create', {}, [groups.metadataNode(group)]));
      return conn.send(iqResult(iq, [groups.metadataNode(group)]));
    } catch (err) {
      return conn.send(iqError(iq, err instanceof SimError ? err.status : 500, (err as Error).message));
    }
  }
  if (child.tag === 'leave') {
    for (const g of childrenNamed(child, 'group')) {
      const group = groups.get(g.attrs.id ?? '');
      if (!group?.members.delete(account.phone)) continue;
      const who = node('participant', { jid: pnJid(account) });
      groups.notify(group, account.phone, node('leave', {}, [who]), [account.phone]);
    }
    return conn.send(iqResult(iq, [node('leave', {}, childrenNamed(child, 'group'))]));
  }
  const group = groups.get(jidDecode(to)?.user ?? '');
  if (!group) return conn.send(iqError(iq, 404, 'item-not-found'));
  if (child.tag === 'query') {
    groups.countQuery(group);
    if (!group.members.has(account.phone)) return conn.send(iqError(iq, 403, 'forbidden'));
    return conn.send(iqResult(iq, [groups.metadataNode(group)]));
  }
  const action = child.tag;
  if (action === 'add' || action === 'remove' || action === 'promote' || action === 'demote') {
    const asked = childrenNamed(child, 'participant').map((p) => jidDecode(p.attrs.jid ?? '')?.user ?? '');
    const outcomes = groups.change(group, account.phone, action, asked);
    const done = outcomes
      .filter((o) => !o.error)
      .map((o) => node('participant', { jid: `${o.phone}@s.whatsapp.net` }));
    if (done.length)
      groups.notify(
        group,
        account.phone,
        node(action, {}, done),
        action === 'remove' ? outcomes.filter((o) => !o.error).map((o) => o.phone) : [],
      );
    const answer = outcomes.map((o) =>
      node('participant', {
        jid: jidEncode(o.phone, 's.whatsapp.net'),
        ...(o.error ? { error: o.error } : {}),
      }),
    );
    return conn.send(iqResult(iq, [node(action, {}, answer)]));
  }
  return conn.send(iqResult(iq));
}

/**
 * A linked device's message to a group: acked (error 403 when the account may not write there),
 * then each member's phone takes the sender key from its copy (if this stanza carries one) and
 * decrypts the `skmsg` — once per member, in arrival order.
 */
