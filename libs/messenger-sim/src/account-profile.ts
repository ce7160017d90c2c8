import { createHash } from 'node:crypto';
import { getBinaryNodeChild, jidDecode, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { SimUser } from './directory.js';
import type { MediaHost } from './media-host.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { bytesOf, childrenNamed, iqError, iqResult, newStanzaId, node, unixSeconds } from './stanza.js';

/** What the account's profile (picture, business profile, blocklist) needs of the simulator. */
export interface AccountProfileContext extends DirectoryContext, DeliveryContext {
  readonly media: MediaHost;
  /** Counts what may have changed the state (persistence.ts). */
  changes: number;
}

/**
 * An account's profile as WhatsApp keeps it: the "about" (set by the text status mutation,
 * text-status.ts; read through usync `status`), the profile photo (`w:profile:picture` set /
 * remove / get), a business profile (`w:biz`), and its blocklist (`blocklist` iqs, pushed to its
 * other devices as `account_sync` notifications). The name is SimUser's (a client sets it with `<presence name=…>`: see presence-subscriptions.ts).
 */
export interface BusinessProfileInput {
  description?: string;
  category?: string;
  email?: string;
  website?: string;
  address?: string;
}

export interface AccountProfileState {
  about?: string;
  aboutSetAt?: number;
  /** The photo a client uploaded (the re-encoded JPEG as received). */
  picture?: { id: string; url: string; bytes: Buffer };
  business?: BusinessProfileInput;
  /** LIDs (digits) this account blocked, with the phone when it was given. */
  blocked: Map<string, string | undefined>;
  /** Whether others see when it was last online (`last` of its presence, else `deny`). */
  shareLastSeen: boolean;
}

/** Largest photo a client may upload (WhatsApp's are 640×640 JPEGs, far smaller). */
const MAX_PICTURE_BYTES = 2 * 1024 * 1024;

const states = new WeakMap<SimUser, AccountProfileState>();

export function profileOf(user: SimUser): AccountProfileState {
  let state = states.get(user);
  if (!state) states.set(user, (state = { blocked: new Map(), shareLastSeen: true }));
  return state;
}

/**
 * `status` set, the legacy "about" iq: answered, and in 2026 it changes nothing — only the text
 * status mutation sets the about contacts see (text-status.ts; whatsmeow 662b0121 / PR #1219).
 */
export function handleStatusIq(conn: ClientConnection, iq: BinaryNode): void {
  const account = conn.account;
  const status = getBinaryNodeChild(iq, 'status');
  if (!account || iq.attrs.type !== 'set' || !status) return conn.send(iqError(iq, 400, 'bad-request'));
  const text = bytesOf(status)?.toString('utf8') ?? '';
  if (text.length > 139) return conn.send(iqError(iq, 406, 'not-acceptable'));
  conn.send(iqResult(iq));
}

/** The usync `status` protocol's answer for one user: its "about" and when it was set. */
export function statusNode(user: SimUser): BinaryNode {
  const state = profileOf(user);
  const t = String(Math.floor((state.aboutSetAt ?? Date.now()) / 1000));
  return node('status', { t }, state.about ? Buffer.from(state.about, 'utf8') : undefined);
}

/**
 * `w:profile:picture`: get answers the picture's URL (404 when there is none); set with a
 * `<picture>` stores the account's new photo (no `target`: its own; a group's is not simulated),
 * set without one removes it.
 */
export function handlePictureIq(sim: AccountProfileContext, conn: ClientConnection, iq: BinaryNode): void {
  if (iq.attrs.type === 'get') return answerPicture(sim, conn, iq);
  const account = conn.account;
  if (!account) return conn.send(iqError(iq, 401, 'not-authorized'));
  if (iq.attrs.target && jidDecode(iq.attrs.target)?.user !== account.phone)
    return conn.send(iqError(iq, 403, 'forbidden'));
  const state = profileOf(account);
  const picture = getBinaryNodeChild(iq, 'picture');
  if (!picture) {
    state.picture = undefined;
    account.pictureUrl = undefined;
    notifyPicture(sim, account, conn, 'delete');
    return conn.send(iqResult(iq));
  }
  const bytes = bytesOf(picture);
  if (!bytes?.length) return conn.send(iqError(iq, 400, 'bad-request'));
  if (bytes.length > MAX_PICTURE_BYTES) return conn.send(iqError(iq, 413, 'too-large'));
  const id = String(Date.now());
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const url = sim.media.publish(`/v/t61/pp/${account.phone}-${digest}.jpg`, bytes);
  state.picture = { id, url, bytes };
  account.pictureUrl = url;
  notifyPicture(sim, account, conn, 'set');
  conn.send(iqResult(iq, [node('picture', { id })]));
}

function answerPicture(sim: AccountProfileContext, conn: ClientConnection, iq: BinaryNode): void {
  const target = jidDecode(iq.attrs.target ?? '');
  const user = target ? sim.directory.resolve(target.user, target.server) : undefined;
  const url = user ? (profileOf(user).picture?.url ?? user.pictureUrl) : undefined;
  if (!user || !url) return conn.send(iqError(iq, 404, 'item-not-found'));
  const type = getBinaryNodeChild(iq, 'picture')?.attrs.type ?? 'preview';
  conn.send(iqResult(iq, [node('picture', { url, id: profileOf(user).picture?.id ?? '1', type })]));
}

/** The account's other devices learn that its photo changed (`picture` notification). */
function notifyPicture(
  sim: AccountProfileContext,
  account: SimUser,
  from: ClientConnection,
  action: 'set' | 'delete',
) {
  const jid = jidEncode(account.phone, 's.whatsapp.net');
  for (const device of account.devices.values()) {
    if (device.connection === from) continue;
    sim.deliverToDevice(
      device,
      node('notification', { from: jid, type: 'picture', id: newStanzaId(), t: unixSeconds() }, [
        node(action, { jid, id: String(Date.now()) }),
      ]),
    );
  }
}

/** `w:biz` get `<business_profile><profile jid/>`: the profile of a business account, else none. */
export function handleBusinessIq(sim: AccountProfileContext, conn: ClientConnection, iq: BinaryNode): void {
  const request = getBinaryNodeChild(iq, 'business_profile');
  const profiles = childrenNamed(request, 'profile').map((p) => {
    const jid = jidDecode(p.attrs.jid ?? '');
    const user = jid ? sim.directory.resolve(jid.user, jid.server) : undefined;
    const business = user ? profileOf(user).business : undefined;
    if (!business || !p.attrs.jid) return undefined;
    const field = (tag: string, value: string | undefined) =>
      value === undefined ? [] : [node(tag, {}, Buffer.from(value, 'utf8'))];
    return node('profile', { jid: p.attrs.jid }, [
      ...field('description', business.description),
      ...field('email', business.email),
      ...field('website', business.website),
      ...field('address', business.address),
      ...(business.category
        ? [node('categories', {}, [node('category', { id: '1' }, Buffer.from(business.category, 'utf8'))])]
        : []),
    ]);
  });
  conn.send(
    iqResult(iq, [
      node(
        'business_profile',
        {},
        profiles.filter((p): p is BinaryNode => !!p),
      ),
    ]),
  );
}

/** A blocklist's `dhash`: changes whenever the list does (clients compare it). */
function dhash(state: AccountProfileState): string {
  return createHash('sha256')
    .update([...state.blocked.keys()].sort().join(','))
    .digest('hex')
    .slice(0, 16);
}

function listNode(state: AccountProfileState): BinaryNode {
  const items = [...state.blocked.keys()].map((lid) => node('item', { jid: jidEncode(lid, 'lid') }));
  return node('list', { dhash: dhash(state) }, items);
}

/**
 * `blocklist` iqs (blocklist v2): get answers the list by LID; set `<item action jid=<lid>
 * [pn_jid]>` blocks or unblocks one contact and answers the new list; the account's other devices
 * are told. A block by LID names the phone beside it (`pn_jid`, as Baileys sends it), except for a
 * contact that hides its number, blocked by its LID alone (whatsmeow 8d023aa9, 2026: `pn_jid` only
 * when the client knows the number).
 */
export function handleBlocklistIq(sim: AccountProfileContext, conn: ClientConnection, iq: BinaryNode): void {
  const account = conn.account;
  if (!account) return conn.send(iqError(iq, 401, 'not-authorized'));
  const state = profileOf(account);
  if (iq.attrs.type === 'get') return conn.send(iqResult(iq, [listNode(state)]));
  const item = getBinaryNodeChild(iq, 'item');
  const jid = jidDecode(item?.attrs.jid ?? '');
  const action = item?.attrs.action;
  if (!item || !jid || (action !== 'block' && action !== 'unblock'))
    return conn.send(iqError(iq, 400, 'bad-request'));
  const contact = sim.directory.resolve(jid.user, jid.server);
  if (!contact) return conn.send(iqError(iq, 404, 'item-not-found'));
  if (action === 'block' && jid.server === 'lid' && !item.attrs.pn_jid && !contact.hidePhone)
    return conn.send(iqError(iq, 400, 'bad-request'));
  changeBlock(sim, account, contact, action, conn);
  conn.send(iqResult(iq, [listNode(state)]));
}

/**
 * `account` blocks or unblocks `contact`; its devices other than `from` get the
 * `account_sync` notification (the phone blocking someone reaches every linked device).
 */
export function changeBlock(
  sim: AccountProfileContext,
  account: SimUser,
  contact: SimUser,
  action: 'block' | 'unblock',
  from?: ClientConnection,
): boolean {
  const state = profileOf(account);
  const had = state.blocked.has(contact.lid);
  if (action === 'block') state.blocked.set(contact.lid, contact.phone);
  else state.blocked.delete(contact.lid);
  if (had === (action === 'block')) return false;
  sim.changes++;
  const stanza = () =>
    node(
      'notification',
      {
        from: jidEncode(account.phone, 's.whatsapp.net'),
        type: 'account_sync',
        id: newStanzaId(),
        t: unixSeconds(),
      },
      [
        node('blocklist', { dhash: dhash(state) }, [
          node('item', { jid: jidEncode(contact.lid, 'lid'), action }),
        ]),
      ],
    );
  for (const device of account.devices.values())
    if (device.connection !== from) sim.deliverToDevice(device, stanza());
  return true;
}

/** Whether `account` blocked `contact` (a blocked contact's messages never reach the account). */
export function blocks(account: SimUser, contact: SimUser): boolean {
  return profileOf(account).blocked.has(contact.lid);
}

/** What the control API shows of an account's profile. */
export function profileView(user: SimUser) {
  const state = profileOf(user);
  return {
    phone: user.phone,
    name: user.name,
    about: state.about ?? null,
    pictureUrl: state.picture?.url ?? user.pictureUrl ?? null,
    picture: state.picture
      ? {
          id: state.picture.id,
          bytes: state.picture.bytes.length,
          sha256: createHash('sha256').update(state.picture.bytes).digest('hex'),
          base64: state.picture.bytes.toString('base64'),
        }
      : null,
    business: state.business ?? null,
    shareLastSeen: state.shareLastSeen,
    blocked: [...state.blocked].map(([lid, phone]) => ({ lid: `${lid}@lid`, phone: phone ?? null })),
  };
}
