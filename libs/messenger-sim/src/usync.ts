import { getBinaryNodeChild, jidDecode, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { SimUser } from './directory.js';
import { statusNode } from './account-profile.js';
import type { ContactLookups } from './contact-lookups.js';
import type { DirectoryContext } from './sim-context.js';
import { bytesOf, childNodes, childrenNamed, iqResult, node, unixSeconds } from './stanza.js';
import { asksLidAddressing, lidAddressedContact } from './usync-contacts.js';
import { isUsernameLookup, usernameLookupResult } from './usernames.js';

/** What the `usync` iqs need of the simulator. */
export interface UsyncContext extends DirectoryContext {
  readonly contactLookups: ContactLookups;
}

/**
 * usync answers device lists (with LIDs: the client stores the PN→LID mapping from them and
 * encrypts to the LID), `onWhatsApp` contact checks (counted per account, see contact-lookups.ts)
 * and LID lookups. Companion devices must carry a key-index or the client drops them.
 */
export function handleUsyncIq(sim: UsyncContext, conn: ClientConnection, iq: BinaryNode): void {
  const usync = getBinaryNodeChild(iq, 'usync');
  const protocols = new Set(childNodes(getBinaryNodeChild(usync, 'query')).map((p) => p.tag));
  const requested = childrenNamed(getBinaryNodeChild(usync, 'list'), 'user');
  if (protocols.has('contact') && conn.account) {
    // A contact lookup asks by phone number (a user without a jid).
    sim.contactLookups.record(
      conn.account.phone,
      requested.filter((u) => !u.attrs.jid && !isUsernameLookup(u)).length,
    );
  }
  const byLid = asksLidAddressing(usync);
  const users = requested.map((u) =>
    isUsernameLookup(u)
      ? usernameLookupResult(sim, conn, u, protocols)
      : byLid && !u.attrs.jid
        ? lidAddressedContact(sim, u)
        : userResult(sim, u, protocols),
  );
  conn.send(
    iqResult(iq, [
      node(
        'usync',
        { sid: usync?.attrs.sid ?? '', index: '0', last: 'true', mode: usync?.attrs.mode ?? 'query' },
        [node('list', {}, users)],
      ),
    ]),
  );
}

function userResult(sim: UsyncContext, request: BinaryNode, protocols: Set<string>): BinaryNode {
  let jid = request.attrs.jid;
  let user: SimUser | undefined;
  let isLid = false;
  if (jid) {
    const decoded = jidDecode(jid);
    isLid = decoded?.server === 'lid';
    user = decoded ? sim.directory.resolve(decoded.user, decoded.server) : undefined;
    if (decoded) jid = jidEncode(decoded.user, decoded.server);
  } else {
    const phone = (bytesOf(getBinaryNodeChild(request, 'contact'))?.toString('utf8') ?? '').replace(
      /[^0-9]/g,
      '',
    );
    user = sim.directory.lookupOrCreate(phone);
    jid = jidEncode(phone, 's.whatsapp.net');
  }
  const content: BinaryNode[] = [];
  if (protocols.has('devices')) content.push(devicesNode(user));
  if (protocols.has('lid') && user && !isLid) content.push(node('lid', { val: jidEncode(user.lid, 'lid') }));
  if (protocols.has('contact')) content.push(node('contact', { type: user ? 'in' : 'out' }));
  if (protocols.has('status') && user) content.push(statusNode(user));
  return node('user', { jid: jid ?? '' }, content);
}

function devicesNode(user: SimUser | undefined): BinaryNode {
  if (!user) return node('devices', {}, [node('device-list', {}, [])]);
  const devices = [node('device', { id: '0' })];
  for (const device of user.devices.values()) {
    devices.push(node('device', { id: String(device.id), 'key-index': String(device.keyIndex) }));
  }
  return node('devices', {}, [
    node('device-list', {}, devices),
    node('key-index-list', { ts: unixSeconds() }),
  ]);
}
