/**
 * A group's information and how one joins it: subject, description, the announce and locked
 * settings, the invite link (read, revoke, join by code), each changed by a member — the linked
 * device's `w:g2` iq or another member through the control API — and told to every member's linked
 * devices as a `w:gp2` notification, the way Baileys parses them (handleGroupNotification).
 */
import { randomBytes } from 'node:crypto';
import { jidEncode } from '@whiskeysockets/baileys';
import type { SimGroup, SimGroups } from './groups.js';
import { node, unixSeconds } from './stanza.js';

/** What the group information changes need of the simulator. */
export interface GroupInfoContext {
  readonly groups: SimGroups;
}

export type GroupInfoChange =
  | { kind: 'subject'; subject: string }
  /** `undefined` removes the description. */
  | { kind: 'description'; description: string | undefined }
  | { kind: 'announce'; on: boolean }
  | { kind: 'locked'; on: boolean };

/** WhatsApp's error codes here: 401 not an admin, 403 not a member, 400 bad input. */
export type GroupErrorCode = 400 | 401 | 403;

const MAX_SUBJECT = 100;
const MAX_DESCRIPTION = 2048;
/** Revoked codes remembered per group (joining by one answers 410; an unknown one 406). */
const MAX_REVOKED = 20;

const isAdmin = (group: SimGroup, phone: string) => {
  const role = group.members.get(phone);
  return role === 'admin' || role === 'superadmin';
};

/**
 * A member changes the group's information: settings need an admin, the subject and description
 * too while the group is locked. Returns WhatsApp's error code, or undefined when done (and told).
 */
export function changeGroupInfo(
  sim: GroupInfoContext,
  group: SimGroup,
  actor: string,
  change: GroupInfoChange,
): GroupErrorCode | undefined {
  if (!group.members.has(actor)) return 403;
  const adminOnly = change.kind === 'announce' || change.kind === 'locked' || group.locked;
  if (adminOnly && !isAdmin(group, actor)) return 401;
  switch (change.kind) {
    case 'subject': {
      const subject = change.subject.trim();
      if (!subject || subject.length > MAX_SUBJECT) return 400;
      group.subject = subject;
      const by = jidEncode(actor, 's.whatsapp.net');
      sim.groups.notify(group, actor, node('subject', { subject, s_o: by, s_t: unixSeconds() }));
      return undefined;
    }
    case 'description': {
      if (change.description !== undefined && change.description.length > MAX_DESCRIPTION) return 400;
      const id = randomBytes(8).toString('hex').toUpperCase();
      if (change.description) {
        group.description = change.description;
        group.descriptionId = id;
        sim.groups.notify(
          group,
          actor,
          node('description', { id }, [node('body', {}, Buffer.from(change.description, 'utf8'))]),
        );
      } else {
        delete group.description;
        delete group.descriptionId;
        sim.groups.notify(group, actor, node('description', { id, delete: 'true' }));
      }
      return undefined;
    }
    case 'announce':
      group.announce = change.on;
      sim.groups.notify(group, actor, node(change.on ? 'announcement' : 'not_announcement', {}));
      return undefined;
    case 'locked':
      group.locked = change.on;
      sim.groups.notify(group, actor, node(change.on ? 'locked' : 'unlocked', {}));
      return undefined;
  }
}

/**
 * The group's invite code for an admin (made on first ask); `revoke` replaces it (the old one stops
 * working, and members are told of the new link).
 */
export function inviteCodeOf(
  sim: GroupInfoContext,
  group: SimGroup,
  actor: string,
  revoke: boolean,
): { code: string } | { error: GroupErrorCode } {
  if (!group.members.has(actor)) return { error: 403 };
  if (!isAdmin(group, actor)) return { error: 401 };
  if (revoke && group.inviteCode) {
    group.revokedCodes = [group.inviteCode, ...group.revokedCodes].slice(0, MAX_REVOKED);
    delete group.inviteCode;
  }
  const fresh = !group.inviteCode;
  group.inviteCode ??= randomBytes(16).toString('base64url').slice(0, 22);
  if (revoke && fresh) sim.groups.notify(group, actor, node('invite', { code: group.inviteCode }));
  return { code: group.inviteCode };
}

/**
 * Someone joins by an invite code: the group, or 406 (no such code) / 410 (revoked). Joining a
 * group one is already in answers the group without a change, as WhatsApp does.
 */
export function joinByCode(
  sim: GroupInfoContext,
  phone: string,
  code: string,
): { group: SimGroup } | { error: 406 | 410 } {
  const all = [...sim.groups.all()];
  const group = all.find((g) => g.inviteCode !== undefined && g.inviteCode === code);
  if (!group) return { error: all.some((g) => g.revokedCodes.includes(code)) ? 410 : 406 };
  if (group.members.has(phone)) return { group };
  group.members.set(phone, 'member');
  sim.groups.notify(group, phone, node('add', { reason: 'invite' }, [participantNode(sim, group, phone)]));
  return { group };
}

/** A member as a notification's or an answer's `<participant>` names it (the group's addressing). */
export const participantNode = (sim: GroupInfoContext, group: SimGroup, phone: string) =>
  node('participant', sim.groups.memberAttrs(group, phone));
