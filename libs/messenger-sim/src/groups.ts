/**
 * Group chats of the simulated network: metadata (the `w:g2` queries a client makes, counted per
 * group), creation, and participant changes with their `w:gp2` notifications to every linked device
 * of the members. Messages both ways, with sender-key encryption, are in group-messages.ts.
 */
import { randomInt } from 'node:crypto';
import { jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import { normalizePhone, type SimUser } from './directory.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';
import { newStanzaId, node, unixSeconds } from './stanza.js';

/** What the group chats need of the simulator. */
export interface GroupsContext extends DirectoryContext, DeliveryContext {}

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
  /** Only admins may change the subject, description and picture ("edit group info"). */
  locked: boolean;
  /** The description's id (a client names it as `prev` when it replaces it). */
  descriptionId?: string;
  /** The invite link's code, made when an admin first asks for it. */
  inviteCode?: string;
  /** Codes revoked lately (joining by one answers 410 gone, an unknown code 406). */
  revokedCodes: string[];
}

export interface GroupView {
  id: string;
  subject: string;
  description?: string;
  announce: boolean;
  locked: boolean;
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

  constructor(private readonly sim: GroupsContext) {}

  get(id: string): SimGroup | undefined {
    return this.groups.get(id.replace(/@g\.us$/, ''));
  }

  require(id: string): SimGroup {
    const group = this.get(id);
    if (!group) throw new SimError(`unknown group ${id}`, 404);
    return group;
  }

  all(): IterableIterator<SimGroup> {
    return this.groups.values();
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
      locked: false,
      revokedCodes: [],
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
      locked: group.locked,
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
    const children: BinaryNode[] = [...group.members].map(([phone, role]) =>
      node('participant', {
        ...this.memberAttrs(group, phone),
        ...(role !== 'member' ? { type: role } : {}),
      }),
    );
    if (group.description !== undefined)
      children.push(
        node('description', { id: group.descriptionId ?? group.id }, [
          node('body', {}, Buffer.from(group.description, 'utf8')),
        ]),
      );
    if (group.announce) children.push(node('announcement', {}));
    if (group.locked) children.push(node('locked', {}));
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

  /**
   * How the group names a member, as WhatsApp does: a LID-addressed group by LID with the phone
   * beside it (`phone_number`), a phone-addressed one by phone with the LID beside it — in
   * metadata, in notifications and in the answer to a participant change alike.
   */
  memberAttrs(group: SimGroup, phone: string): Record<string, string> {
    const user = this.sim.directory.get(phone);
    const pn = jidEncode(phone, 's.whatsapp.net');
    const lid = user ? jidEncode(user.lid, 'lid') : undefined;
    return group.addressing === 'lid' && lid
      ? { jid: lid, phone_number: pn }
      : { jid: pn, ...(lid ? { lid } : {}) };
  }

  /**
   * A participant change, as the acting account asked it: each participant by phone, or as the
   * request named it when no user has that id (404). Answers each participant's outcome.
   */
  change(
    group: SimGroup,
    actor: string,
    action: 'add' | 'remove' | 'promote' | 'demote',
    asked: { phone?: string; jid: string }[],
  ): { phone?: string; jid: string; error?: string }[] {
    const isAdmin = (group.members.get(actor) ?? 'member') !== 'member';
    return asked.map(({ phone, jid }) => {
      if (!isAdmin) return { phone, jid, error: '401' };
      if (!phone) return { jid, error: '404' };
      const role = group.members.get(phone);
      if (action === 'add') {
        if (role !== undefined) return { phone, jid, error: '409' };
        const user = this.sim.directory.lookupOrCreate(phone);
        if (!user) return { phone, jid, error: '404' };
        if (group.members.size >= MAX_GROUP_MEMBERS) return { phone, jid, error: '500' };
        group.members.set(user.phone, 'member');
        return { phone, jid };
      }
      if (role === undefined) return { phone, jid, error: '404' };
      if (role === 'superadmin' && action !== 'promote') return { phone, jid, error: '403' };
      if (action === 'remove') group.members.delete(phone);
      else if (role !== 'superadmin') group.members.set(phone, action === 'promote' ? 'admin' : 'member');
      return { phone, jid };
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
              ...this.actorAttrs(group, actor),
              t: unixSeconds(),
              addressing_mode: group.addressing,
            },
            [child],
          ),
        );
      }
    }
  }

  /** Who acted, on a notification: `participant` in the group's addressing, the other id beside it. */
  private actorAttrs(group: SimGroup, phone: string): Record<string, string> {
    const ids = this.memberAttrs(group, phone);
    return group.addressing === 'lid' && ids.phone_number
      ? { participant: ids.jid!, participant_pn: ids.phone_number }
      : { participant: ids.jid!, ...(ids.lid ? { participant_lid: ids.lid } : {}) };
  }

  private userOf(phone: string): SimUser {
    const user = this.sim.directory.lookupOrCreate(phone);
    if (!user) throw new SimError(`${phone} is not on WhatsApp`, 404);
    return user;
  }
}
