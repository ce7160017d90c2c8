/**
 * Group messages of the simulated network, both ways, with sender-key encryption: a linked device's
 * group message is a `skmsg` each member decrypts with the sender key it got (as a `pkmsg`/`msg`
 * copy) from that device; a member writing to a group hands its own sender key to the linked
 * devices the same way. Metadata, creation and participant changes are in groups.ts.
 */
import { randomBytes } from 'node:crypto';
import {
  encodeWAMessage,
  getBinaryNodeChild,
  jidDecode,
  jidEncode,
  proto,
  unpadRandomMax16,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import {
  GroupCipher,
  GroupSessionBuilder,
  SenderKeyDistributionMessage,
  SenderKeyName,
  SenderKeyRecord,
} from '@whiskeysockets/baileys/lib/Signal/Group/index.js';
import type { ClientConnection } from './client-connection.js';
import {
  companionBundle,
  MAX_INBOX,
  noteUndecryptable,
  type InboxMessage,
  type SimUser,
} from './directory.js';
import { pnJid, type SimGroup, type SimGroups } from './groups.js';
import { sha256Hex, type MediaHost } from './media-host.js';
import { describeMessage } from './message-content.js';
import { signalAddress } from './phone-signal.js';
import { applyRevision, rememberSent } from './revisions.js';
import type { SimLogger } from './logger.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';
import { bytesOf, childrenNamed, node, unixSeconds } from './stanza.js';

/** What the group messages need of the simulator. */
export interface GroupMessagesContext extends DirectoryContext, DeliveryContext {
  readonly groups: SimGroups;
  readonly logger: SimLogger;
  readonly media: MediaHost;
}

const senderKeys = new WeakMap<SimUser, Map<string, SenderKeyRecord>>();
/** Which devices (`group|lid.device`) already have a member's sender key. */
const keyHolders = new WeakMap<SimUser, Set<string>>();
/** Keeps each member's group decryptions in arrival order (a sender key is a ratchet). */
const tails = new WeakMap<SimUser, Promise<void>>();

/** A phone's sender-key store (its own keys and those others handed it): groups and status updates. */
export function keyStore(user: SimUser) {
  let keys = senderKeys.get(user);
  if (!keys) senderKeys.set(user, (keys = new Map()));
  const store = keys;
  return {
    loadSenderKey: async (name: SenderKeyName) => store.get(name.toString()) ?? new SenderKeyRecord(),
    storeSenderKey: async (name: SenderKeyName, record: SenderKeyRecord) => {
      store.set(name.toString(), record);
    },
  };
}

/** Runs `work` after the member's earlier sender-key decryptions (a sender key is a ratchet). */
export function inSenderKeyOrder(user: SimUser, work: () => Promise<void>): Promise<void> {
  const done = (tails.get(user) ?? Promise.resolve()).then(work);
  tails.set(
    user,
    done.catch(() => undefined),
  );
  return done;
}

export function handleGroupMessage(
  sim: GroupMessagesContext,
  conn: ClientConnection,
  stanza: BinaryNode,
): void {
  const account = conn.account;
  const device = conn.device;
  if (!account || !device) return;
  const id = stanza.attrs.id ?? '';
  const to = stanza.attrs.to ?? '';
  const group = sim.groups.get(jidDecode(to)?.user ?? '');
  const ack = node('ack', { class: 'message', id, from: to, t: unixSeconds() });
  if (!group || !sim.groups.maySend(group, account.phone)) {
    ack.attrs.error = group ? '403' : '404';
    conn.send(ack);
    return;
  }
  conn.send(ack);
  const lidMode = stanza.attrs.addressing_mode === 'lid';
  const sender = { id: lidMode ? account.lid : account.phone, deviceId: device.id };
  const name = new SenderKeyName(jidEncode(group.id, 'g.us'), {
    ...sender,
    toString: () => `${sender.id}.${sender.deviceId}`,
  });
  const skmsg = bytesOf(getBinaryNodeChild(stanza, 'enc'));
  // The sender key copies, decrypted now and in arrival order (the 1:1 ratchet is shared).
  const keyCopies = new Map<SimUser, Promise<Buffer>>();
  for (const participant of childrenNamed(getBinaryNodeChild(stanza, 'participants'), 'to')) {
    const jid = jidDecode(participant.attrs.jid ?? '');
    const enc = getBinaryNodeChild(participant, 'enc');
    const ciphertext = bytesOf(enc);
    if (!jid || !enc || !ciphertext || (jid.device ?? 0) !== 0) continue;
    const user = sim.directory.resolve(jid.user, jid.server);
    if (!user) continue;
    const plaintext = user.signal.decrypt(
      signalAddress(account.lid, device.id),
      enc.attrs.type ?? 'msg',
      ciphertext,
    );
    plaintext.catch(() => undefined);
    keyCopies.set(user, plaintext);
  }
  for (const phone of group.members.keys()) {
    const user = sim.directory.get(phone);
    if (!user || user === account) continue;
    const copy = keyCopies.get(user);
    const previous = tails.get(user) ?? Promise.resolve();
    const done = previous
      .then(async () => {
        if (copy) {
          const m = proto.Message.decode(unpadRandomMax16(await copy));
          const skdm = m.senderKeyDistributionMessage?.axolotlSenderKeyDistributionMessage;
          if (skdm) {
            const message = new SenderKeyDistributionMessage(null, null, null, null, skdm);
            await new GroupSessionBuilder(keyStore(user)).process(name, message);
          }
        }
        if (!skmsg) throw new Error('no skmsg in the group message');
        const plain = await new GroupCipher(keyStore(user), name).decrypt(skmsg);
        await record(sim, user, account.phone, group, id, proto.Message.decode(unpadRandomMax16(plain)));
      })
      .catch((err: unknown) => {
        sim.logger.warn({ err, id, to: user.phone, group: group.id }, 'member could not read group message');
        noteUndecryptable(user, id, account.phone, err);
      });
    tails.set(user, done);
  }
}

async function record(
  sim: GroupMessagesContext,
  user: SimUser,
  from: string,
  group: SimGroup,
  id: string,
  message: proto.IMessage,
): Promise<void> {
  const { fields, media } = describeMessage(message);
  const entry: InboxMessage = {
    id,
    from,
    groupId: jidEncode(group.id, 'g.us'),
    ...fields,
    ...mentionsOf(message),
    receivedAt: new Date().toISOString(),
  };
  if (media) {
    const bytes = await sim.media.decrypt(media, media.mediaKey, media.mediaType);
    entry.fileSha256 = sha256Hex(bytes);
    entry.fileLength = bytes.length;
  }
  const first = user.inbox.find((m) => m.id === id && m.from === from);
  if (first) {
    first.duplicates = (first.duplicates ?? 0) + 1;
    return;
  }
  applyRevision(user, entry);
  if (user.inbox.push(entry) > MAX_INBOX) user.inbox.shift();
  sim.logger.debug({ id, to: user.phone, group: group.id }, 'group message arrived');
}

/** The mentioned JIDs of a text or caption, as the inbox shows them. */
export function mentionsOf(message: proto.IMessage): { mentions?: string[] } {
  const m =
    message.extendedTextMessage ?? message.imageMessage ?? message.videoMessage ?? message.documentMessage;
  const mentioned = m?.contextInfo?.mentionedJid;
  return mentioned?.length ? { mentions: [...mentioned] } : {};
}

/**
 * A member writes a text to the group (or sends another message, e.g. an edit, a delete or a
 * reaction: group-revisions.ts): every linked device of the other members gets the `skmsg`, plus
 * — the first time — the member's sender key as a Signal copy.
 */
export async function sendToGroup(
  sim: GroupMessagesContext,
  groupId: string,
  fromPhone: string,
  text: string,
  build?: (member: SimUser, groupJid: string) => proto.IMessage | undefined,
): Promise<{ id: string; deliveredTo: string[] }> {
  const group = sim.groups.require(groupId);
  const member = sim.directory.get(fromPhone);
  if (!member || !group.members.has(member.phone))
    throw new SimError(`${fromPhone} is not a member of the group`, 409);
  if (!sim.groups.maySend(group, member.phone))
    throw new SimError('only admins may write to this group', 403);
  const gjid = jidEncode(group.id, 'g.us');
  const built = build?.(member, gjid);
  if (!built && (typeof text !== 'string' || !text || text.length > 65_536))
    throw new SimError('text is required', 400);
  const lidMode = group.addressing === 'lid';
  const author = lidMode ? member.lid : member.phone;
  const name = new SenderKeyName(gjid, { id: author, deviceId: 0, toString: () => `${author}.0` });
  const store = keyStore(member);
  const skdm = await new GroupSessionBuilder(store).create(name);
  const skmsg = await new GroupCipher(store, name).encrypt(encodeWAMessage(built ?? { conversation: text }));
  const id = `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
  // what the member may edit or delete later (revisions.ts)
  if (!built || built.extendedTextMessage) rememberSent(member, id);
  let holders = keyHolders.get(member);
  if (!holders) keyHolders.set(member, (holders = new Set()));
  const deliveredTo: string[] = [];
  for (const phone of group.members.keys()) {
    const account = sim.directory.get(phone);
    if (!account || account === member) continue;
    for (const device of account.devices.values()) {
      const encs: BinaryNode[] = [];
      const holder = `${gjid}|${account.lid}.${device.id}`;
      if (!holders.has(holder)) {
        const address = signalAddress(account.lid, device.id);
        if (!member.signal.hasSession(address))
          await member.signal.startSession(address, companionBundle(device));
        const keyMessage = encodeWAMessage({
          senderKeyDistributionMessage: {
            groupId: gjid,
            axolotlSenderKeyDistributionMessage: skdm.serialize(),
          },
        });
        const { type, ciphertext } = await member.signal.encrypt(address, keyMessage);
        encs.push(node('enc', { v: '2', type }, ciphertext));
        holders.add(holder);
      }
      encs.push(node('enc', { v: '2', type: 'skmsg' }, Buffer.from(skmsg)));
      sim.deliverToDevice(
        device,
        node(
          'message',
          {
            from: gjid,
            ...(lidMode
              ? { participant: jidEncode(member.lid, 'lid'), participant_pn: pnJid(member) }
              : { participant: pnJid(member), participant_lid: jidEncode(member.lid, 'lid') }),
            id,
            type: 'text',
            t: unixSeconds(),
            notify: member.name,
            addressing_mode: group.addressing,
          },
          encs,
        ),
      );
      deliveredTo.push(`${account.phone}:${device.id}`);
    }
  }
  return { id, deliveredTo };
}
