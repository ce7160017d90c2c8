/**
 * Status updates ("stories") of the simulated network. A linked device posts one as a message to
 * `status@broadcast` whose `<participants>` list the viewers' devices: like a group message it is
 * one `skmsg` under the poster's status sender key, with that key handed to each viewer as a
 * Signal copy (Baileys hands it to every viewer on every status: no sender-key memory for
 * statuses). Each viewer's phone takes the key and decrypts the status; a viewer "opens" it later
 * (`view`), which sends the poster's devices a read receipt from `status@broadcast`. Contacts post
 * statuses too (`postStatus`): the poster's devices get the `skmsg` with `participant` the contact.
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
} from '@whiskeysockets/baileys/lib/Signal/Group/index.js';
import type { ClientConnection } from './client-connection.js';
import { companionBundle, noteUndecryptable } from './directory.js';
import { inSenderKeyOrder, keyStore } from './group-messages.js';
import { pnJid } from './groups.js';
import { describeMessage } from './message-content.js';
import { signalAddress } from './phone-signal.js';
import type { SimLogger } from './logger.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';
import { bytesOf, childrenNamed, node, unixSeconds } from './stanza.js';

/** What the status updates need of the simulator. */
export interface StatusBroadcastContext extends DirectoryContext, DeliveryContext {
  readonly logger: SimLogger;
  readonly statuses: SimStatuses;
}

export const STATUS_JID = 'status@broadcast';

/** A status as the simulator keeps it: who posted it, what it is, who could read it and who opened it. */
export interface SimStatus {
  id: string;
  poster: string;
  postedAt: string;
  type: string;
  text?: string;
  caption?: string;
  mimetype?: string;
  /** A text status's background (ARGB) and font, as the viewers' phones got them. */
  backgroundArgb?: number;
  font?: number;
  /** Viewers named in the stanza (their phones), and those whose phone decrypted it. */
  audience: string[];
  readBy: string[];
  /** Viewers who opened it (a read receipt went to the poster). */
  viewedBy: string[];
  /** The poster deleted it for everyone (a revoke to `status@broadcast`). */
  deleted?: true;
}

/** How many statuses the simulator keeps (the oldest leave first). */
const MAX_STATUSES = 1000;

export class SimStatuses {
  private readonly byId = new Map<string, SimStatus>();

  get(id: string): SimStatus | undefined {
    return this.byId.get(id);
  }

  require(id: string): SimStatus {
    const status = this.byId.get(id);
    if (!status) throw new SimError(`unknown status ${id}`, 404);
    return status;
  }

  add(status: SimStatus): void {
    this.byId.set(status.id, status);
    if (this.byId.size > MAX_STATUSES) this.byId.delete(this.byId.keys().next().value!);
  }

  /** The statuses `phone` posted, oldest first. */
  of(phone: string): SimStatus[] {
    return [...this.byId.values()].filter((s) => s.poster === phone);
  }
}

/**
 * A linked device's status (or a revoke of one): acked, then each listed viewer's phone takes the
 * sender key from its copy and decrypts the `skmsg` — once per viewer, in arrival order.
 */
export function handleStatusMessage(
  sim: StatusBroadcastContext,
  conn: ClientConnection,
  stanza: BinaryNode,
): void {
  const account = conn.account;
  const device = conn.device;
  if (!account || !device) return;
  const id = stanza.attrs.id ?? '';
  conn.send(node('ack', { class: 'message', id, from: STATUS_JID, t: unixSeconds() }));
  // Baileys encrypts a status under the account's LID (no addressing mode: 'lid' by default).
  const sender = { id: account.lid, deviceId: device.id };
  const name = new SenderKeyName(STATUS_JID, {
    ...sender,
    toString: () => `${sender.id}.${sender.deviceId}`,
  });
  const skmsg = bytesOf(getBinaryNodeChild(stanza, 'enc'));
  const status: SimStatus = {
    id,
    poster: account.phone,
    postedAt: new Date().toISOString(),
    type: 'other',
    audience: [],
    readBy: [],
    viewedBy: [],
  };
  let first = true;
  for (const participant of childrenNamed(getBinaryNodeChild(stanza, 'participants'), 'to')) {
    const jid = jidDecode(participant.attrs.jid ?? '');
    const enc = getBinaryNodeChild(participant, 'enc');
    const ciphertext = bytesOf(enc);
    if (!jid || !enc || !ciphertext || (jid.device ?? 0) !== 0) continue;
    const viewer = sim.directory.resolve(jid.user, jid.server);
    if (!viewer || viewer === account) continue;
    status.audience.push(viewer.phone);
    const copy = viewer.signal.decrypt(
      signalAddress(account.lid, device.id),
      enc.attrs.type ?? 'msg',
      ciphertext,
    );
    copy.catch(() => undefined);
    const decodeHere = first;
    first = false;
    void inSenderKeyOrder(viewer, async () => {
      const m = proto.Message.decode(unpadRandomMax16(await copy));
      const skdm = m.senderKeyDistributionMessage?.axolotlSenderKeyDistributionMessage;
      if (skdm)
        await new GroupSessionBuilder(keyStore(viewer)).process(
          name,
          new SenderKeyDistributionMessage(null, null, null, null, skdm),
        );
      if (!skmsg) throw new Error('no skmsg in the status');
      const plain = await new GroupCipher(keyStore(viewer), name).decrypt(skmsg);
      const message = proto.Message.decode(unpadRandomMax16(plain));
      if (applyStatusRevoke(sim, account.phone, message)) return;
      // Every viewer decrypts the same message: the first one describes it.
      if (decodeHere) describeStatus(status, message);
      status.readBy.push(viewer.phone);
    }).catch((err: unknown) => {
      sim.logger.warn({ err, id, to: viewer.phone }, 'viewer could not read status');
      noteUndecryptable(viewer, id, account.phone, err);
    });
  }
  sim.statuses.add(status);
}

function describeStatus(status: SimStatus, message: proto.IMessage): void {
  const { fields } = describeMessage(message);
  status.type = fields.type;
  if (fields.text !== undefined) status.text = fields.text;
  if (fields.caption !== undefined) status.caption = fields.caption;
  if (fields.mimetype !== undefined) status.mimetype = fields.mimetype;
  const ext = message.extendedTextMessage;
  if (typeof ext?.backgroundArgb === 'number') status.backgroundArgb = ext.backgroundArgb;
  if (typeof ext?.font === 'number') status.font = ext.font;
}

/** A revoke sent to `status@broadcast` deletes the poster's status; answers whether it was one. */
function applyStatusRevoke(sim: StatusBroadcastContext, poster: string, message: proto.IMessage): boolean {
  const protocol = message.protocolMessage;
  if (protocol?.type !== proto.Message.ProtocolMessage.Type.REVOKE) return false;
  const target = sim.statuses.get(protocol.key?.id ?? '');
  if (target?.poster === poster) target.deleted = true;
  return true;
}

/**
 * Viewers open a status: each (default: every viewer whose phone decrypted it and has not opened
 * it yet) sends the poster's devices a read receipt from `status@broadcast`, once.
 */
export function viewStatus(
  sim: StatusBroadcastContext,
  id: string,
  viewers?: string[],
): { viewed: string[] } {
  const status = sim.statuses.require(id);
  const poster = sim.directory.get(status.poster);
  if (!poster) throw new SimError(`unknown poster ${status.poster}`, 404);
  const asked = viewers ?? status.readBy;
  const viewed: string[] = [];
  for (const phone of asked) {
    if (!status.readBy.includes(phone)) throw new SimError(`${phone} has not received status ${id}`, 409);
    if (status.viewedBy.includes(phone)) continue;
    status.viewedBy.push(phone);
    viewed.push(phone);
    const viewer = sim.directory.get(phone)!;
    for (const device of poster.devices.values())
      sim.deliverToDevice(
        device,
        node('receipt', {
          from: STATUS_JID,
          participant: pnJid(viewer),
          id,
          type: 'read',
          t: unixSeconds(),
        }),
      );
  }
  return { viewed };
}

export interface ContactStatusInput {
  text?: string;
  backgroundArgb?: number;
  /** Who sees it: phones; the linked accounts among them get it on every device. */
  viewers: string[];
}

/**
 * A contact posts a text status: every linked device of its viewers gets the `skmsg` (with
 * `participant` the contact), plus the contact's status sender key as a Signal copy.
 */
export async function postStatus(
  sim: StatusBroadcastContext,
  fromPhone: string,
  input: ContactStatusInput,
): Promise<{ id: string; deliveredTo: string[] }> {
  const poster = sim.directory.lookupOrCreate(fromPhone);
  if (!poster) throw new SimError(`unknown contact ${fromPhone}`, 404);
  const text = input.text;
  if (typeof text !== 'string' || !text || text.length > 700)
    throw new SimError('text is required (1-700 characters)', 400);
  if (!Array.isArray(input.viewers) || input.viewers.length === 0)
    throw new SimError('viewers must list phones', 400);
  const name = new SenderKeyName(STATUS_JID, {
    id: poster.phone,
    deviceId: 0,
    toString: () => `${poster.phone}.0`,
  });
  const store = keyStore(poster);
  const skdm = await new GroupSessionBuilder(store).create(name);
  const message: proto.IMessage = {
    extendedTextMessage: {
      text,
      ...(typeof input.backgroundArgb === 'number' ? { backgroundArgb: input.backgroundArgb } : {}),
    },
  };
  const skmsg = await new GroupCipher(store, name).encrypt(encodeWAMessage(message));
  const id = `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
  const keyMessage = encodeWAMessage({
    senderKeyDistributionMessage: {
      groupId: STATUS_JID,
      axolotlSenderKeyDistributionMessage: skdm.serialize(),
    },
  });
  const deliveredTo: string[] = [];
  for (const phone of input.viewers.map(String)) {
    const account = sim.directory.get(phone);
    if (!account || account === poster) continue;
    for (const device of account.devices.values()) {
      const address = signalAddress(account.lid, device.id);
      if (!poster.signal.hasSession(address))
        await poster.signal.startSession(address, companionBundle(device));
      const { type, ciphertext } = await poster.signal.encrypt(address, keyMessage);
      sim.deliverToDevice(
        device,
        node(
          'message',
          {
            from: STATUS_JID,
            participant: pnJid(poster),
            participant_lid: jidEncode(poster.lid, 'lid'),
            id,
            type: 'text',
            t: unixSeconds(),
            notify: poster.name,
          },
          [
            node('enc', { v: '2', type }, ciphertext),
            node('enc', { v: '2', type: 'skmsg' }, Buffer.from(skmsg)),
          ],
        ),
      );
      deliveredTo.push(`${account.phone}:${device.id}`);
    }
  }
  return { id, deliveredTo };
}

/** Who got what: a poster's statuses as the simulator saw them (for tests and the sandbox). */
export function statusesOf(sim: StatusBroadcastContext, phone: string): SimStatus[] {
  return sim.statuses.of(phone);
}
