import { jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import { normalizePhone } from './directory.js';
import { SimError } from './sim-error.js';
import type { DirectoryContext } from './sim-context.js';
import { childNodes } from './stanza.js';

/**
 * Read receipts a linked device sends for messages contacts wrote (Baileys' `readMessages`):
 * `<receipt to=chat [participant=author] id type="read"|"read-self" t><list><item id/>…</list>`.
 * A `read` receipt reaches the contact (blue ticks); a `read-self` one — sent when the account's
 * read-receipts privacy is off — goes only to the account's own devices: the contact never sees
 * it. Both are recorded by the contact they are about, with whether the contact was shown them.
 * Each account's privacy settings (`privacy` get) start from WhatsApp's defaults; the control API
 * switches its read receipts off or on.
 */

export interface SimReadReceipt {
  /** The account whose device sent it. */
  from: string;
  /** The message read (its WhatsApp id). */
  id: string;
  type: 'read' | 'read-self';
  /** The contact saw it (a `read` receipt). */
  shown: boolean;
  /** A group message's group. */
  groupId?: string;
  at: string;
}

export const PRIVACY_DEFAULTS: Record<string, string> = {
  readreceipts: 'all',
  last: 'all',
  online: 'all',
  profile: 'all',
  status: 'all',
  groupadd: 'all',
  calladd: 'all',
  messages: 'all',
};

const MAX_PER_CONTACT = 1000;
const receiptsBySim = new WeakMap<DirectoryContext, Map<string, SimReadReceipt[]>>();
const privacyBySim = new WeakMap<DirectoryContext, Map<string, Record<string, string>>>();

function receiptsOf(sim: DirectoryContext): Map<string, SimReadReceipt[]> {
  let m = receiptsBySim.get(sim);
  if (!m) receiptsBySim.set(sim, (m = new Map()));
  return m;
}

function privacyOf(sim: DirectoryContext): Map<string, Record<string, string>> {
  let m = privacyBySim.get(sim);
  if (!m) privacyBySim.set(sim, (m = new Map()));
  return m;
}

/** The account's privacy settings as a `privacy` get answers them. */
export function privacySettings(sim: DirectoryContext, phone: string | undefined): Record<string, string> {
  return { ...PRIVACY_DEFAULTS, ...(phone ? privacyOf(sim).get(phone) : {}) };
}

/** Switches the account's read receipts: `all` (contacts see them) or `none`. */
export function setReadReceiptsPrivacy(
  sim: DirectoryContext,
  phone: string,
  value: unknown,
): Record<string, string> {
  const account = sim.directory.get(phone);
  if (!account) throw new SimError(`unknown phone ${phone}`, 404);
  if (value !== 'all' && value !== 'none') throw new SimError('readreceipts must be all or none', 400);
  privacyOf(sim).set(account.phone, { ...privacyOf(sim).get(account.phone), readreceipts: value });
  return privacySettings(sim, account.phone);
}

/** A `read` / `read-self` receipt from a linked device: recorded for the contact it is about. */
export function recordReadReceipt(sim: DirectoryContext, conn: ClientConnection, stanza: BinaryNode): void {
  const from = conn.account?.phone;
  const type = stanza.attrs.type;
  if (!from || (type !== 'read' && type !== 'read-self')) return;
  const to = stanza.attrs.to ?? '';
  const group = to.endsWith('@g.us') ? to : undefined;
  const about = jidDecode(group ? (stanza.attrs.participant ?? '') : to);
  const contact = about ? sim.directory.resolve(about.user, about.server) : undefined;
  if (!contact) return;
  const ids = [
    stanza.attrs.id,
    ...childNodes(childNodes(stanza).find((n) => n.tag === 'list')).map((i) => i.attrs.id),
  ];
  const receipts = receiptsOf(sim);
  let list = receipts.get(contact.phone);
  if (!list) receipts.set(contact.phone, (list = []));
  const at = new Date().toISOString();
  for (const id of ids) {
    if (!id) continue;
    list.push({ from, id, type, shown: type === 'read', ...(group ? { groupId: group } : {}), at });
    if (list.length > MAX_PER_CONTACT) list.shift();
  }
}

/** The read receipts sent for messages `phone` wrote, oldest first. */
export function readReceiptsOf(sim: DirectoryContext, phone: string): SimReadReceipt[] {
  return [...(receiptsOf(sim).get(normalizePhone(phone)) ?? [])];
}

/** The control API's routes of read receipts and the accounts' privacy. */
export function readReceiptRoutes(
  sim: DirectoryContext,
): Array<[string, RegExp, (body: Record<string, unknown>, params: string[]) => unknown]> {
  return [
    [
      'GET',
      /^\/contacts\/([^/]+)\/read-receipts$/,
      (_b, [phone]) => ({ receipts: readReceiptsOf(sim, phone!) }),
    ],
    ['GET', /^\/accounts\/([^/]+)\/privacy$/, (_b, [phone]) => privacySettings(sim, normalizePhone(phone!))],
    [
      'PUT',
      /^\/accounts\/([^/]+)\/privacy$/,
      (b, [phone]) => setReadReceiptsPrivacy(sim, normalizePhone(phone!), b.readreceipts),
    ],
  ];
}
