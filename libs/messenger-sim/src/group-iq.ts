/**
 * `w:g2` iqs of a linked device: a group's metadata, the account's groups, create, participant
 * changes, leave, the group's information (subject, description, settings), its invite link and
 * joining by code. The state and its notifications are in groups.ts and group-info.ts.
 */
import { jidDecode, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import {
  changeGroupInfo,
  inviteCodeOf,
  joinByCode,
  participantNode,
  type GroupInfoChange,
  type GroupInfoContext,
} from './group-info.js';
import {
  participantPhone as phoneOf,
  recordGroupRequest,
  type GroupPrivacyContext,
} from './group-privacy.js';
import type { SimGroup } from './groups.js';
import { SimError } from './sim-error.js';
import { bytesOf, childrenNamed, firstChild, iqError, iqResult, node } from './stanza.js';

/** What the `w:g2` iqs need of the simulator. */
export interface GroupIqContext extends GroupInfoContext, GroupPrivacyContext {}

const ERROR_TEXT: Record<number, string> = {
  400: 'bad-request',
  401: 'not-authorized',
  403: 'forbidden',
  404: 'item-not-found',
  406: 'not-acceptable',
  410: 'gone',
};
const fail = (iq: BinaryNode, code: number) => iqError(iq, code, ERROR_TEXT[code] ?? 'error');

export function handleGroupIq(sim: GroupIqContext, conn: ClientConnection, iq: BinaryNode): void {
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
      .map((p) => phoneOf(sim, p.attrs.jid))
      .filter((p): p is string => !!p);
    try {
      const view = groups.create({
        subject: child.attrs.subject ?? '',
        members: [account.phone, ...phones.filter((p) => p !== account.phone)],
      });
      const group = groups.require(view.id);
      recordGroupRequest(sim, account, 'create', child, view.id);
      groups.notify(group, account.phone, node('create', {}, [groups.metadataNode(group)]));
      return conn.send(iqResult(iq, [groups.metadataNode(group)]));
    } catch (err) {
      recordGroupRequest(sim, account, 'create', child, undefined);
      return conn.send(iqError(iq, err instanceof SimError ? err.status : 500, (err as Error).message));
    }
  }
  if (child.tag === 'leave') {
    for (const g of childrenNamed(child, 'group')) {
      const group = groups.get(g.attrs.id ?? '');
      if (!group?.members.has(account.phone)) continue;
      const who = participantNode(sim, group, account.phone);
      group.members.delete(account.phone);
      groups.notify(group, account.phone, node('leave', {}, [who]), [account.phone]);
    }
    return conn.send(iqResult(iq, [node('leave', {}, childrenNamed(child, 'group'))]));
  }
  if (child.tag === 'invite' && child.attrs.code !== undefined) return joinOrPeek(sim, conn, iq, child);
  const group = groups.get(jidDecode(to)?.user ?? '');
  if (!group) return conn.send(fail(iq, 404));
  if (child.tag === 'query') {
    groups.countQuery(group);
    if (!group.members.has(account.phone)) return conn.send(fail(iq, 403));
    return conn.send(iqResult(iq, [groups.metadataNode(group)]));
  }
  const action = child.tag;
  if (action === 'add' || action === 'remove' || action === 'promote' || action === 'demote')
    return changeParticipants(sim, conn, iq, group, action, child);
  if (child.tag === 'invite') {
    const got = inviteCodeOf(sim, group, account.phone, iq.attrs.type === 'set');
    if ('error' in got) return conn.send(fail(iq, got.error));
    return conn.send(iqResult(iq, [node('invite', { code: got.code })]));
  }
  const change = infoChange(child);
  if (change) {
    const error = changeGroupInfo(sim, group, account.phone, change);
    return conn.send(error ? fail(iq, error) : iqResult(iq));
  }
  return conn.send(iqResult(iq));
}

/**
 * add / remove / promote / demote: each participant answered the way the group names its members
 * (a LID-addressed group by LID with `phone_number` beside it, whatever the request used), as
 * WhatsApp does (Baileys issue #1842); one notification of the done ones to every member.
 */
function changeParticipants(
  sim: GroupIqContext,
  conn: ClientConnection,
  iq: BinaryNode,
  group: SimGroup,
  action: 'add' | 'remove' | 'promote' | 'demote',
  child: BinaryNode,
): void {
  const actor = conn.account!.phone;
  if (action === 'add') recordGroupRequest(sim, conn.account!, 'add', child, jidEncode(group.id, 'g.us'));
  const asked = childrenNamed(child, 'participant').map((p) => ({
    jid: p.attrs.jid ?? '',
    phone: phoneOf(sim, p.attrs.jid),
  }));
  const named = (o: { phone?: string; jid: string }) =>
    o.phone ? participantNode(sim, group, o.phone) : node('participant', { jid: o.jid });
  const outcomes = sim.groups.change(group, actor, action, asked);
  const answer = outcomes.map((o) =>
    o.error ? node('participant', { ...named(o).attrs, error: o.error }) : named(o),
  );
  const done = outcomes.filter((o) => !o.error);
  if (done.length)
    sim.groups.notify(
      group,
      actor,
      node(
        action,
        {},
        done.map((o) => named(o)),
      ),
      action === 'remove' ? done.map((o) => o.phone!) : [],
    );
  conn.send(iqResult(iq, [node(action, {}, answer)]));
}

function infoChange(child: BinaryNode): GroupInfoChange | undefined {
  switch (child.tag) {
    case 'subject':
      return { kind: 'subject', subject: bytesOf(child)?.toString('utf8') ?? '' };
    case 'description': {
      if (child.attrs.delete === 'true') return { kind: 'description', description: undefined };
      const body = bytesOf(childrenNamed(child, 'body')[0])?.toString('utf8');
      return { kind: 'description', description: body || undefined };
    }
    case 'announcement':
    case 'not_announcement':
      return { kind: 'announce', on: child.tag === 'announcement' };
    case 'locked':
    case 'unlocked':
      return { kind: 'locked', on: child.tag === 'locked' };
    default:
      return undefined;
  }
}

/** `<invite code>` to `@g.us`: `set` joins the group (answers its id), `get` describes it. */
function joinOrPeek(sim: GroupIqContext, conn: ClientConnection, iq: BinaryNode, child: BinaryNode): void {
  const code = child.attrs.code ?? '';
  if (iq.attrs.type !== 'set') {
    const group = [...sim.groups.all()].find((g) => g.inviteCode === code);
    return conn.send(group ? iqResult(iq, [sim.groups.metadataNode(group)]) : fail(iq, 406));
  }
  const joined = joinByCode(sim, conn.account!.phone, code);
  if ('error' in joined) return conn.send(fail(iq, joined.error));
  conn.send(iqResult(iq, [node('group', { jid: jidEncode(joined.group.id, 'g.us') })]));
}
