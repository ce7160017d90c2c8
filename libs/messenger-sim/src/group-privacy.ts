import { jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { SimUser } from './directory.js';
import { SimError } from './sim-error.js';
import type { Reachout } from './reachout.js';
import type { DirectoryContext } from './sim-context.js';
import { bytesOf, childrenNamed } from './stanza.js';

/**
 * Privacy tokens on group requests (whatsmeow 00ce57f2, "call,group,user: add tctokens to more
 * requests"): a `w:g2` `create` and an `add` may name a participant with
 * `<participant jid><privacy>token</privacy></participant>` — the tctoken the participant's phone
 * issued to the account when it wrote to it. The server here records each such request and
 * checks each token against the one issued (reachout.ts), and refuses nothing for it, strict
 * first contacts or not: whatsmeow shows no refusal of a participant without a token (it sends
 * none when it holds none, and before 00ce57f2 its participant add sent none at all).
 * GET /accounts/:phone/group-requests shows them.
 */

/** What the group privacy checks need of the simulator. */
export interface GroupPrivacyContext extends DirectoryContext {
  readonly reachout: Reachout;
}

export type GroupPrivacy = 'valid' | 'invalid' | 'none';

export interface GroupRequestView {
  kind: 'create' | 'add';
  /** The group (`<id>@g.us`); absent when a create was refused. */
  group?: string;
  participants: { jid: string; phone?: string; privacy: GroupPrivacy }[];
  at: string;
}

/** Requests kept per account (the oldest dropped). */
const MAX_REQUESTS = 1000;
const logs = new WeakMap<SimUser, GroupRequestView[]>();

/** The phone a participant JID names (a LID through the directory), if anyone has it. */
export function participantPhone(sim: GroupPrivacyContext, jid: string | undefined): string | undefined {
  const decoded = jidDecode(jid ?? '');
  if (!decoded?.user) return undefined;
  if (decoded.server === 'lid') return sim.directory.getByLid(decoded.user)?.phone;
  return decoded.user;
}

/** Records a `create` or `add` from `account`'s device with the verdict on each participant's token. */
export function recordGroupRequest(
  sim: GroupPrivacyContext,
  account: SimUser,
  kind: 'create' | 'add',
  request: BinaryNode,
  group: string | undefined,
): void {
  const participants = childrenNamed(request, 'participant').map((p) => {
    const jid = p.attrs.jid ?? '';
    const phone = participantPhone(sim, jid);
    const token = bytesOf(childrenNamed(p, 'privacy')[0]);
    const privacy: GroupPrivacy = !token?.length
      ? 'none'
      : phone && sim.reachout.tctokenValid(account.phone, phone, token)
        ? 'valid'
        : 'invalid';
    return { jid, ...(phone ? { phone } : {}), privacy };
  });
  let log = logs.get(account);
  if (!log) logs.set(account, (log = []));
  log.push({ kind, ...(group ? { group } : {}), participants, at: new Date().toISOString() });
  if (log.length > MAX_REQUESTS) log.shift();
}

/** GET /accounts/:phone/group-requests: `{ requests }`, oldest first. */
export function groupPrivacyRoutes(
  sim: GroupPrivacyContext,
): Array<[string, RegExp, (body: Record<string, unknown>, params: string[]) => unknown]> {
  return [
    [
      'GET',
      /^\/accounts\/([^/]+)\/group-requests$/,
      (_b, [phone]) => {
        const account = sim.directory.get(phone!);
        if (!account) throw new SimError(`unknown account ${phone}`, 404);
        return { requests: logs.get(account) ?? [] };
      },
    ],
  ];
}
