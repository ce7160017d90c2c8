import {
  getBinaryNodeChild,
  getBinaryNodeChildren,
  jidDecode,
  USyncQuery,
  USyncUser,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { isLidAddress, isPhoneAddress, phoneOfJid, toUserJid, USER_SERVER, userOfJid } from '@mgw/contracts';
import type { USyncQueryProtocol } from '@whiskeysockets/baileys/lib/Types/USync.js';
import type { ContactAnswer } from '@mgw/store';

/**
 * "Is this number on WhatsApp?" as WhatsApp asks it since July 2026 (whatsmeow 6e4c3416 and
 * d8960d95, `IsOnWhatsApp` in user.go): the usync query's `contact` protocol carries
 * `addressing_mode="lid"`, each number goes as `<contact>+<digits>@c.us</contact>`, and the answer
 * names a number on WhatsApp by its LID (`jid`) with its phone JID beside it (`pn_jid`); a number
 * not on WhatsApp may come back with `pn_jid` alone (no `jid`). The `contact` child echoes what was
 * asked, so an answer is matched to its number even when WhatsApp rewrote the number (a country's
 * extra digit): by the echo, then by `pn_jid`, then by `jid`.
 *
 * Baileys' USyncQuery runs it (`executeUSyncQuery`, its IQ and timeout), with this protocol in
 * place of its own `contact` one and this parser in place of its own, which drops `pn_jid` and
 * every user without a `jid`.
 */

/** One user of the answer, as `lookupMany` reads it (a test's fake socket answers this shape too). */
export interface NumberAnswerEntry {
  /** The JID WhatsApp names the user by: its LID (`…@lid`), or, answered the older way, its phone JID. */
  id: string;
  /** On WhatsApp (`<contact type="in">`). */
  contact?: boolean;
  /** The LID: `id` when it is one, or an older answer's `<lid val>`. */
  lid?: unknown;
  /** The phone JID WhatsApp gave (`pn_jid`). */
  pnJid?: string;
  /** The digits of the number as asked (the `contact` child's echo). */
  query?: string;
}

const LEGACY_SUFFIX = '@c.us';

const lidContactProtocol: USyncQueryProtocol = {
  name: 'contact',
  getQueryElement: () => ({ tag: 'contact', attrs: { addressing_mode: 'lid' } }),
  getUserElement: (user) =>
    user.phone ? { tag: 'contact', attrs: {}, content: `${user.phone}${LEGACY_SUFFIX}` } : null,
  parser: (node) => node.attrs.type === 'in',
};

/** The lookup of `phones` (digits) in one usync query, read with `parseNumberAnswers`. */
export function numberLookupQuery(phones: readonly string[]): USyncQuery {
  const query = new USyncQuery();
  query.protocols.push(lidContactProtocol);
  for (const phone of phones) query.withUser(new USyncUser().withPhone(`+${phone}`));
  query.parseUSyncQueryResult = (result) => {
    const list = parseNumberAnswers(result);
    return list && { list: list as unknown as { id: string }[], sideList: [] };
  };
  return query;
}

/** The users of a usync answer as whatsmeow reads them (undefined: not a result). */
export function parseNumberAnswers(result: BinaryNode | undefined): NumberAnswerEntry[] | undefined {
  if (result?.attrs.type !== 'result') return undefined;
  const list = getBinaryNodeChild(getBinaryNodeChild(result, 'usync'), 'list');
  const entries: NumberAnswerEntry[] = [];
  for (const user of getBinaryNodeChildren(list, 'user')) {
    const { jid, pn_jid: pnJid } = user.attrs;
    // whatsmeow d8960d95: a number not on WhatsApp may come back with `pn_jid` alone.
    const id = jid || pnJid;
    if (!id) continue;
    const contact = getBinaryNodeChild(user, 'contact');
    const olderLid = getBinaryNodeChild(user, 'lid')?.attrs.val;
    const query = digitsOf(contact?.content);
    entries.push({
      id,
      contact: contact?.attrs.type === 'in',
      ...(isLidAddress(id) ? { lid: toUserJid(id)! } : olderLid ? { lid: olderLid } : {}),
      ...(pnJid ? { pnJid } : {}),
      ...(query ? { query } : {}),
    });
  }
  return entries;
}

/** Each answer under every number it may be for: its echo, its `pn_jid`'s and its phone `id`'s digits. */
export function answersByNumber(list: readonly NumberAnswerEntry[]): Map<string, NumberAnswerEntry> {
  const out = new Map<string, NumberAnswerEntry>();
  for (const entry of list) {
    const phoneId = phoneOfJid(entry.id);
    const names = [entry.query, entry.pnJid ? jidDecode(entry.pnJid)?.user : undefined, phoneId];
    for (const name of names) if (name && !out.has(name)) out.set(name, entry);
  }
  return out;
}

/** What the device keeps of an answer for `phone`: its phone JID (to send to) and its LID. */
export function answerOf(entry: NumberAnswerEntry | undefined, phone: string): ContactAnswer {
  if (!entry?.contact) return { onWhatsApp: false };
  const jid = [entry.pnJid, entry.id].filter(isPhoneAddress).map(toUserJid)[0] ?? `${phone}@${USER_SERVER}`;
  const lid = isLidAddress(entry.lid) ? toUserJid(entry.lid) : undefined;
  return { onWhatsApp: true, jid, ...(lid ? { lid } : {}) };
}

function digitsOf(content: BinaryNode['content']): string | undefined {
  const text =
    typeof content === 'string'
      ? content
      : content instanceof Uint8Array
        ? Buffer.from(content).toString('utf8')
        : undefined;
  // The echo is `+<digits>@c.us` as asked, or the digits alone.
  const digits = (userOfJid(text) ?? text)?.replace(/[^0-9]/g, '');
  return digits || undefined;
}
