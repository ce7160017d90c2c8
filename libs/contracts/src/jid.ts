/**
 * WhatsApp addresses (JIDs), parsed — never compared as strings. The protocol writes one address
 * more than one way, and a string comparison takes only the spelling its author had in mind:
 *
 * - the **server itself** with or without its `@`: `@s.whatsapp.net` (a JID pair with no user, as
 *   Baileys' decoder renders it) and `s.whatsapp.net` (the dictionary token) are one address;
 * - a **device** and an **agent** part: `<user>:<device>@…`, `<user>.<agent>:<device>@…`
 *   (whatsmeow's spelling) and `<user>_<agent>:<device>@…` (Baileys');
 * - the **legacy user server** `c.us`, which means `s.whatsapp.net`.
 *
 * This reads them as whatsmeow's `types.ParseJID` does (types/jid.go): no `@` is a server alone.
 * A phone JID (`s.whatsapp.net`) and a LID (`lid`) of one person are different addresses: the
 * mapping between them is the contact store's, not this module's. The linter refuses raw
 * comparisons of JID strings (scripts/eslint/no-raw-jid.js); use these instead.
 */

export const USER_SERVER = 's.whatsapp.net';
export const LEGACY_USER_SERVER = 'c.us';
export const LID_SERVER = 'lid';
export const GROUP_SERVER = 'g.us';
export const BROADCAST_SERVER = 'broadcast';
export const NEWSLETTER_SERVER = 'newsletter';
export const HOSTED_SERVER = 'hosted';
export const HOSTED_LID_SERVER = 'hosted.lid';
export const BOT_SERVER = 'bot';

/** A parsed address: `server` normalized (`c.us` is `s.whatsapp.net`); `user` empty for a server. */
export interface ParsedJid {
  user: string;
  server: string;
  /** 0 when absent. */
  agent: number;
  /** 0 when absent (the main device). */
  device: number;
}

const SERVER_NAME = /^[a-z][a-z.]*$/;
const NUMBER = /^[0-9]{1,5}$/;

/** The address `value` names, or undefined when it is not one (not a string, two `@`, a bad device). */
export function parseJid(value: unknown): ParsedJid | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  const at = value.indexOf('@');
  if (at < 0)
    return SERVER_NAME.test(value)
      ? { user: '', server: normalServer(value), agent: 0, device: 0 }
      : undefined;
  if (value.indexOf('@', at + 1) >= 0) return undefined;
  const server = value.slice(at + 1);
  if (!SERVER_NAME.test(server)) return undefined;
  let user = value.slice(0, at);
  let agent = 0;
  let device = 0;
  const colon = user.indexOf(':');
  if (colon >= 0) {
    const d = user.slice(colon + 1);
    if (!NUMBER.test(d)) return undefined;
    device = Number(d);
    user = user.slice(0, colon);
  }
  const agentAt = Math.max(user.indexOf('.'), user.indexOf('_'));
  if (agentAt >= 0) {
    const a = user.slice(agentAt + 1);
    if (!NUMBER.test(a)) return undefined;
    agent = Number(a);
    user = user.slice(0, agentAt);
  }
  return { user, server: normalServer(server), agent, device };
}

const normalServer = (server: string): string => (server === LEGACY_USER_SERVER ? USER_SERVER : server);

const on = (value: unknown, server: string): ParsedJid | undefined => {
  const jid = parseJid(value);
  return jid && jid.server === server && jid.user !== '' ? jid : undefined;
};

/** WhatsApp's server itself (`@s.whatsapp.net`, `s.whatsapp.net`, `@c.us`): what may send it notifications. */
export function isServerAddress(value: unknown): boolean {
  const jid = parseJid(value);
  return !!jid && jid.user === '' && jid.server === USER_SERVER;
}

/** A person by phone number (`<digits>@s.whatsapp.net`, `@c.us`, any device). */
export const isPhoneAddress = (value: unknown): boolean => !!on(value, USER_SERVER);
/** A person by LID (`<digits>@lid`, any device). */
export const isLidAddress = (value: unknown): boolean => !!on(value, LID_SERVER);
/** A person, by phone or LID. */
export const isPersonAddress = (value: unknown): boolean => isPhoneAddress(value) || isLidAddress(value);
export const isGroupAddress = (value: unknown): boolean => !!on(value, GROUP_SERVER);
export const isNewsletterAddress = (value: unknown): boolean => !!on(value, NEWSLETTER_SERVER);
/** A broadcast list or the status broadcast. */
export const isBroadcastAddress = (value: unknown): boolean => !!on(value, BROADCAST_SERVER);
/** `status@broadcast`: status updates. */
export const isStatusAddress = (value: unknown): boolean => on(value, BROADCAST_SERVER)?.user === 'status';

/** The user part (a phone's digits, a LID's, a group's id), whatever the device or spelling. */
export const userOfJid = (value: unknown): string | undefined => parseJid(value)?.user || undefined;

/** The phone digits of a phone JID; undefined for anything else. */
export const phoneOfJid = (value: unknown): string | undefined => on(value, USER_SERVER)?.user;

/** `<user>@<server>` without device or agent, the server normalized (`c.us` → `s.whatsapp.net`). */
export function toUserJid(value: unknown): string | undefined {
  const jid = parseJid(value);
  return jid && jid.user ? `${jid.user}@${jid.server}` : undefined;
}

/** The same user on the same server (devices and spellings aside): a phone JID and a LID never are. */
export function sameUser(a: unknown, b: unknown): boolean {
  const x = parseJid(a);
  const y = parseJid(b);
  return !!x && !!y && x.user !== '' && x.user === y.user && x.server === y.server;
}

/** The same address down to the device. */
export function sameJid(a: unknown, b: unknown): boolean {
  const x = parseJid(a);
  const y = parseJid(b);
  return !!x && !!y && x.user === y.user && x.server === y.server && x.device === y.device;
}
