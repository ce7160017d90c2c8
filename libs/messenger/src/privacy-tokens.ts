import {
  generateMessageIDV2,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  type BinaryNode,
  type GroupMetadata,
  type ParticipantAction,
} from '@whiskeysockets/baileys';
import { isPersonAddress, isPhoneAddress, toUserJid, userOfJid } from '@mgw/contracts';
import { extractGroupMetadata } from '@whiskeysockets/baileys/lib/Socket/groups.js';
import { isTcTokenExpired } from '@whiskeysockets/baileys/lib/Utils/tc-token-utils.js';
import type { WASocket } from './socket.js';

/**
 * A contact's privacy token (tctoken) on the group requests that name it, as whatsmeow 00ce57f2
 * ("call,group,user: add tctokens to more requests") sends them: group creation and a participant
 * add carry `<participant jid><privacy>token</privacy></participant>` for each participant whose
 * phone issued the account a token (it wrote to the account) that has not expired.
 *
 * Baileys rc14's `groupCreate` and `groupParticipantsUpdate` build their participant nodes
 * without a hook, so the two iqs are built here — the same nodes Baileys sends (`w:g2`, `create`
 * with `subject` and `key`; `<add>`), with the tokens added — and sent with the socket's `query`;
 * the answers are read exactly as Baileys reads them (`extractGroupMetadata`; `{ status, jid,
 * content }` per participant), so callers see no difference.
 *
 * The token is read the way whatsmeow's `ensureTCToken` reads its store: the `tctoken` auth key
 * under the contact's LID (a phone number through Baileys' phone -> LID map, its `lid-mapping`
 * keys; no lookup is made for it), else under the JID given, with Baileys' expiry rule
 * (`isTcTokenExpired`: four weekly buckets). Never logged.
 *
 * Call rejects carry none: whatsmeow added `<tctoken>` to the reject in 00ce57f2 and removed it
 * again in 592721a0 ("call: remove tctoken in reject requests", whatsmeow issue #1182: with the
 * token WhatsApp ignored the reject and the caller's phone kept ringing). `sock.rejectCall` stays.
 */

/** The non-expired tctoken the account holds for `jid` (a phone or LID JID), if any. */
export async function contactTcToken(sock: WASocket, jid: string): Promise<Uint8Array | undefined> {
  const keys = sock.authState?.keys;
  const user = userOfJid(jid);
  if (!keys || !user || !isPersonAddress(jid)) return undefined;
  let storage = toUserJid(jid)!;
  if (isPhoneAddress(jid)) {
    const lid = (await keys.get('lid-mapping', [user]))[user];
    if (typeof lid === 'string' && lid) storage = `${lid}@lid`;
  }
  const entry = (await keys.get('tctoken', [storage]))[storage] as
    { token?: Uint8Array; timestamp?: number | string } | undefined;
  return entry?.token?.length && !isTcTokenExpired(entry.timestamp) ? entry.token : undefined;
}

/** `<participant jid>`, with `<privacy>` when the account holds the contact's tctoken. */
async function participantNode(sock: WASocket, jid: string): Promise<BinaryNode> {
  const token = await contactTcToken(sock, jid);
  return {
    tag: 'participant',
    attrs: { jid },
    ...(token ? { content: [{ tag: 'privacy', attrs: {}, content: token }] } : {}),
  };
}

const groupIq = (to: string, content: BinaryNode[]): BinaryNode => ({
  tag: 'iq',
  attrs: { type: 'set', xmlns: 'w:g2', to },
  content,
});

/** Baileys' `groupCreate(subject, participants)`, each participant with its privacy token. */
export async function createGroup(sock: WASocket, subject: string, jids: string[]): Promise<GroupMetadata> {
  const participants = await Promise.all(jids.map((jid) => participantNode(sock, jid)));
  const result = (await sock.query(
    groupIq('@g.us', [
      { tag: 'create', attrs: { subject, key: generateMessageIDV2() }, content: participants },
    ]),
  )) as BinaryNode;
  return extractGroupMetadata(result);
}

/**
 * Baileys' `groupParticipantsUpdate(jid, participants, action)`: an `add` names each participant
 * with its privacy token; the other actions are Baileys' own.
 */
export async function updateGroupParticipants(
  sock: WASocket,
  groupJid: string,
  jids: string[],
  action: ParticipantAction,
): Promise<{ status: string; jid: string | undefined; content: BinaryNode }[]> {
  if (action !== 'add') return sock.groupParticipantsUpdate(groupJid, jids, action);
  const participants = await Promise.all(jids.map((jid) => participantNode(sock, jid)));
  const result = (await sock.query(
    groupIq(groupJid, [{ tag: action, attrs: {}, content: participants }]),
  )) as BinaryNode;
  const node = getBinaryNodeChild(result, action);
  return getBinaryNodeChildren(node, 'participant').map((p) => ({
    status: p.attrs.error || '200',
    jid: p.attrs.jid,
    content: p,
  }));
}
