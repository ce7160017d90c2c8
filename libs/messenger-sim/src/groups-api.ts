import { normalizePhone } from './directory.js';
import {
  changeGroupInfo,
  inviteCodeOf,
  joinByCode,
  participantNode,
  type GroupInfoContext,
} from './group-info.js';
import { groupMemberMessage } from './group-revisions.js';
import { sendToGroup, type GroupMessagesContext } from './group-messages.js';
import { SimError } from './sim-error.js';
import { node } from './stanza.js';

/** What the group routes need of the simulator. */
export interface GroupsApiContext extends GroupInfoContext, GroupMessagesContext {}

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

const phones = (body: Body, key: string, required: boolean): string[] | undefined => {
  const value = body[key];
  if (value === undefined && !required) return undefined;
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string' && typeof p !== 'number'))
    throw new SimError(`${key} must be an array of phone numbers`, 400);
  return value.map(String);
};

const phoneOf = (body: Body, key: string): string => {
  const value = body[key];
  if (typeof value !== 'string' && typeof value !== 'number') throw new SimError(`${key} is required`, 400);
  return normalizePhone(String(value));
};

/** WhatsApp's refusal of a member's change, as the control API answers it. */
const refused = (code: number | undefined): void => {
  if (code === undefined) return;
  if (code === 401) throw new SimError('only admins may do this', 403);
  if (code === 403) throw new SimError('not a member of the group', 409);
  if (code === 406) throw new SimError('no group has this invite code', 404);
  if (code === 410) throw new SimError('this invite code was revoked', 410);
  throw new SimError('refused', code);
};

/**
 * The control API's group routes: create a group (`members[0]` is its creator), read it (with the
 * count of metadata queries clients made), switch announce mode, have a member write to it, and
 * have a member change it (subject, description, settings, participants, invite link) or leave
 * it, or someone join it by code — each told to the members' linked devices as WhatsApp does.
 */
export function groupRoutes(sim: GroupsApiContext): Array<[string, RegExp, Handler]> {
  return [
    [
      'POST',
      /^\/groups$/,
      (b) =>
        sim.groups.create({
          subject: typeof b.subject === 'string' ? b.subject : '',
          members: phones(b, 'members', true)!,
          admins: phones(b, 'admins', false),
          description: typeof b.description === 'string' ? b.description : undefined,
          announce: b.announce === true,
          addressing: b.addressing === 'lid' ? 'lid' : 'pn',
        }),
    ],
    ['GET', /^\/groups\/([^/]+)$/, (_b, [id]) => sim.groups.view(sim.groups.require(id!))],
    [
      'POST',
      /^\/groups\/([^/]+)\/announce$/,
      (b, [id]) => {
        if (typeof b.announce !== 'boolean') throw new SimError('announce must be true or false', 400);
        return sim.groups.setAnnounce(id!, b.announce);
      },
    ],
    [
      'POST',
      /^\/groups\/([^/]+)\/send$/,
      (b, [id]) => {
        if (typeof b.from !== 'string' && typeof b.from !== 'number')
          throw new SimError('from is required', 400);
        return sendToGroup(
          sim,
          id!,
          String(b.from),
          typeof b.text === 'string' ? b.text : '',
          (member, gjid) => groupMemberMessage(member, gjid, b),
        );
      },
    ],
    ...memberChangeRoutes(sim),
    [
      'GET',
      /^\/accounts\/([^/]+)\/group-queries$/,
      (_b, [phone]) => ({ participating: sim.groups.listQueriesOf(phone!) }),
    ],
  ];
}

/** Another member changes the group, leaves it, or someone joins it by code. */
function memberChangeRoutes(sim: GroupsApiContext): Array<[string, RegExp, Handler]> {
  const group = (id: string) => sim.groups.require(id);
  const view = (id: string) => sim.groups.view(group(id));
  return [
    [
      'POST',
      /^\/groups\/([^/]+)\/subject$/,
      (b, [id]) => {
        if (typeof b.subject !== 'string') throw new SimError('subject is required', 400);
        refused(changeGroupInfo(sim, group(id!), phoneOf(b, 'by'), { kind: 'subject', subject: b.subject }));
        return view(id!);
      },
    ],
    [
      'POST',
      /^\/groups\/([^/]+)\/description$/,
      (b, [id]) => {
        if (b.description !== undefined && typeof b.description !== 'string')
          throw new SimError('description must be a string (empty or absent removes it)', 400);
        const description = (b.description as string | undefined) || undefined;
        refused(changeGroupInfo(sim, group(id!), phoneOf(b, 'by'), { kind: 'description', description }));
        return view(id!);
      },
    ],
    [
      'POST',
      /^\/groups\/([^/]+)\/settings$/,
      (b, [id]) => {
        const by = phoneOf(b, 'by');
        for (const kind of ['announce', 'locked'] as const) {
          if (b[kind] === undefined) continue;
          if (typeof b[kind] !== 'boolean') throw new SimError(`${kind} must be true or false`, 400);
          refused(changeGroupInfo(sim, group(id!), by, { kind, on: b[kind] }));
        }
        return view(id!);
      },
    ],
    [
      'POST',
      /^\/groups\/([^/]+)\/participants$/,
      (b, [id]) => {
        const g = group(id!);
        const by = phoneOf(b, 'by');
        const action = b.action;
        if (action !== 'add' && action !== 'remove' && action !== 'promote' && action !== 'demote')
          throw new SimError('action must be add, remove, promote or demote', 400);
        if (!g.members.has(by)) throw new SimError('not a member of the group', 409);
        const asked = phones(b, 'participants', true)!.map((phone) => ({
          phone,
          jid: `${phone}@s.whatsapp.net`,
        }));
        const outcomes = sim.groups.change(g, by, action, asked);
        const done = outcomes.filter((o) => !o.error).map((o) => o.phone!);
        if (done.length)
          sim.groups.notify(
            g,
            by,
            node(
              action,
              {},
              done.map((p) => participantNode(sim, g, p)),
            ),
            action === 'remove' ? done : [],
          );
        return { ...view(id!), outcomes: outcomes.map((o) => ({ phone: o.phone, error: o.error })) };
      },
    ],
    [
      'POST',
      /^\/groups\/([^/]+)\/leave$/,
      (b, [id]) => {
        const g = group(id!);
        const phone = phoneOf(b, 'phone');
        if (!g.members.has(phone)) throw new SimError('not a member of the group', 409);
        const who = participantNode(sim, g, phone);
        g.members.delete(phone);
        sim.groups.notify(g, phone, node('leave', {}, [who]), [phone]);
        return view(id!);
      },
    ],
    [
      'POST',
      /^\/groups\/([^/]+)\/invite$/,
      (b, [id]) => {
        const got = inviteCodeOf(sim, group(id!), phoneOf(b, 'by'), b.revoke === true);
        if ('error' in got) refused(got.error);
        return got;
      },
    ],
    [
      'POST',
      /^\/groups\/join$/,
      (b) => {
        if (typeof b.code !== 'string') throw new SimError('code is required', 400);
        const user = sim.directory.lookupOrCreate(phoneOf(b, 'phone'));
        if (!user) throw new SimError('not on WhatsApp', 404);
        const joined = joinByCode(sim, user.phone, b.code);
        if ('error' in joined) refused(joined.error);
        return 'group' in joined ? sim.groups.view(joined.group) : undefined;
      },
    ],
  ];
}
