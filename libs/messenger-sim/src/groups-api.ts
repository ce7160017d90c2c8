import { groupMemberMessage } from './group-revisions.js';
import { sendToGroup } from './group-messages.js';
import type { Simulator } from './simulator.js';
import { SimError } from './sim-error.js';

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

const phones = (body: Body, key: string, required: boolean): string[] | undefined => {
  const value = body[key];
  if (value === undefined && !required) return undefined;
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string' && typeof p !== 'number'))
    throw new SimError(`${key} must be an array of phone numbers`, 400);
  return value.map(String);
};

/**
 * The control API's group routes: create a group (`members[0]` is its creator), read it (with the
 * count of metadata queries clients made), switch announce mode, have a member write to it.
 */
export function groupRoutes(sim: Simulator): Array<[string, RegExp, Handler]> {
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
    [
      'GET',
      /^\/accounts\/([^/]+)\/group-queries$/,
      (_b, [phone]) => ({ participating: sim.groups.listQueriesOf(phone!) }),
    ],
  ];
}
