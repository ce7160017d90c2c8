/**
 * App-state sync (`w:sync:app:state`): where an account's devices keep chat state and business
 * labels — archive, pin, mute, labels and their chats — as encrypted patches in named collections
 * (`regular`, `regular_low`, `regular_high`…). The server only stores and hands out the patches in
 * version order; the keys are shared between the account's own devices (the phone sends its key to
 * each companion as an APP_STATE_SYNC_KEY_SHARE message), and every device checks each patch's
 * MACs and the collection's LT-hash. The simulated phone is such a device: it holds the key, keeps
 * each collection's LT-hash state by decoding every patch (a companion's patch whose MACs do not
 * verify is refused), makes its own patches (a label created on the phone) with Baileys' encoder,
 * and tells the companions of a new version with a `server_sync` notification.
 */
import { randomBytes } from 'node:crypto';
import {
  decodePatches,
  encodeSyncdPatch,
  encodeWAMessage,
  newLTHashState,
  proto,
  type BinaryNode,
  type LTHashState,
  type WAPatchCreate,
} from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { SimUser } from './directory.js';
import { sendToOwnDevices } from './own-devices.js';
import type { SimLogger } from './logger.js';
import type { DeliveryContext } from './sim-context.js';
import { SimError } from './sim-error.js';
import {
  bytesOf,
  childrenNamed,
  firstChild,
  iqError,
  iqResult,
  newStanzaId,
  node,
  unixSeconds,
} from './stanza.js';

/** What the app-state sync needs of the simulator. */
export interface AppStateContext extends DeliveryContext {
  readonly logger: SimLogger;
}

/** Patches kept per collection (a simulator bound; WhatsApp compacts into snapshots). */
const MAX_PATCHES = 2_000;

interface Collection {
  version: number;
  /** Encoded SyncdPatch, each with its version set. */
  patches: Uint8Array[];
  /** The phone's LT-hash state of the collection (as a device keeps it). */
  phone: LTHashState;
}

/** What the account's app state says now, as the phone decoded it. */
export interface AppStateView {
  collections: Record<string, number>;
  labels: Record<string, { name: string; color?: number; deleted?: boolean }>;
  /** `labelId|chat jid` of each chat that carries a label. */
  chatLabels: string[];
  chats: Record<string, { archived?: boolean; pinned?: boolean; mutedUntil?: number }>;
}

interface AccountAppState {
  keyId: Buffer;
  keyData: Buffer;
  collections: Map<string, Collection>;
  view: AppStateView;
}

export class SimAppState {
  private readonly accounts = new WeakMap<SimUser, AccountAppState>();

  constructor(private readonly sim: AppStateContext) {}

  private of(user: SimUser): AccountAppState {
    let st = this.accounts.get(user);
    if (!st) {
      st = {
        keyId: randomBytes(6),
        keyData: randomBytes(32),
        collections: new Map(),
        view: { collections: {}, labels: {}, chatLabels: [], chats: {} },
      };
      this.accounts.set(user, st);
    }
    return st;
  }

  private keyLookup(st: AccountAppState) {
    const id = st.keyId.toString('base64');
    return async (keyId: string) =>
      keyId === id ? proto.Message.AppStateSyncKeyData.fromObject({ keyData: st.keyData }) : undefined;
  }

  private collection(st: AccountAppState, name: string): Collection {
    let c = st.collections.get(name);
    if (!c) st.collections.set(name, (c = { version: 0, patches: [], phone: newLTHashState() }));
    return c;
  }

  view(user: SimUser): AppStateView {
    const st = this.of(user);
    for (const [name, c] of st.collections) st.view.collections[name] = c.version;
    return st.view;
  }

  /**
   * The phone shares its app-state key with each linked device of the account (a peer message
   * only the account's own devices accept). Answers how many devices it was sent to.
   */
  async shareKey(user: SimUser): Promise<number> {
    const st = this.of(user);
    const message = encodeWAMessage({
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
        appStateSyncKeyShare: {
          keys: [
            {
              keyId: { keyId: st.keyId },
              keyData: {
                keyData: st.keyData,
                fingerprint: { rawId: 1, currentIndex: 0, deviceIndexes: [0] },
                timestamp: Date.now(),
              },
            },
          ],
        },
      },
    });
    return sendToOwnDevices(this.sim, user, message);
  }

  /** A change made on the phone (a label created, a chat labelled…): one patch, told to the devices. */
  /**
   * `tell: false`: the devices are not told (`server_sync`) — a change made before a device linked,
   * or whose notification was lost: a device learns it only when it syncs the collection.
   */
  async phonePatch(
    user: SimUser,
    patchCreate: WAPatchCreate,
    opts: { tell?: boolean } = {},
  ): Promise<number> {
    const st = this.of(user);
    const c = this.collection(st, patchCreate.type);
    const { patch, state } = await encodeSyncdPatch(
      patchCreate,
      st.keyId.toString('base64'),
      c.phone,
      this.keyLookup(st),
    );
    this.store(c, { ...patch, version: { version: state.version } });
    c.phone = state;
    record(st.view, patchCreate.index, patchCreate.syncAction);
    if (opts.tell !== false) this.tellDevices(user, patchCreate.type, c.version);
    return c.version;
  }

  /**
   * A device's `w:sync:app:state` iq: collections it asks patches of (since its version), and
   * patches it pushes (at the collection's current version, else 409: it must sync first).
   */
  async handleIq(conn: ClientConnection, iq: BinaryNode): Promise<void> {
    const user = conn.account;
    const sync = firstChild(iq);
    if (!user || sync?.tag !== 'sync') return conn.send(iqError(iq, 400, 'bad-request'));
    const st = this.of(user);
    const answers: BinaryNode[] = [];
    for (const asked of childrenNamed(sync, 'collection')) {
      const name = asked.attrs.name ?? '';
      const since = Number(asked.attrs.version ?? '0');
      if (!name || !Number.isInteger(since) || since < 0) return conn.send(iqError(iq, 400, 'bad-request'));
      const c = this.collection(st, name);
      const pushed = childrenNamed(asked, 'patch');
      if (pushed.length) {
        if (since !== c.version) return conn.send(iqError(iq, 409, 'conflict'));
        try {
          for (const p of pushed) await this.accept(st, name, c, bytesOf(p) ?? Buffer.alloc(0));
        } catch (err) {
          this.sim.logger.info({ name, err: (err as Error).message }, 'app-state patch refused');
          return conn.send(iqError(iq, 400, 'bad-request'));
        }
        answers.push(node('collection', { name, version: String(c.version) }));
        this.tellDevices(user, name, c.version, conn);
        continue;
      }
      const newer = c.patches.slice(since);
      answers.push(
        node('collection', { name, version: String(c.version) }, [
          node(
            'patches',
            {},
            newer.map((p) => node('patch', {}, p)),
          ),
        ]),
      );
    }
    conn.send(iqResult(iq, [node('sync', {}, answers)]));
  }

  /** A device's patch: the phone decodes it (MACs and LT-hash checked), then it is stored. */
  private async accept(st: AccountAppState, name: string, c: Collection, bytes: Buffer): Promise<void> {
    const patch = proto.SyncdPatch.decode(bytes);
    patch.version = { version: c.version + 1 };
    const mutations: { index: string[]; syncAction: proto.ISyncActionData }[] = [];
    const { state } = await decodePatches(
      name as Parameters<typeof decodePatches>[0],
      [patch],
      c.phone,
      this.keyLookup(st),
      {},
      undefined,
      undefined,
      true,
    ).then((r) => {
      for (const m of Object.values(r.mutationMap))
        mutations.push({ index: m.index, syncAction: m.syncAction });
      return r;
    });
    if (state.version !== c.version + 1) throw new Error('the patch did not apply');
    this.store(c, patch);
    c.phone = state;
    for (const m of mutations) record(st.view, m.index, m.syncAction.value ?? {});
  }

  private store(c: Collection, patch: proto.ISyncdPatch): void {
    if (c.patches.length >= MAX_PATCHES) throw new SimError('too many app-state patches', 507);
    c.patches.push(proto.SyncdPatch.encode(patch).finish());
    c.version += 1;
  }

  /** `server_sync`: a collection has a new version (the device that made it is not told). */
  private tellDevices(user: SimUser, name: string, version: number, except?: ClientConnection): void {
    for (const device of user.devices.values()) {
      if (except?.device?.id === device.id) continue;
      this.sim.deliverToDevice(
        device,
        node(
          'notification',
          { from: 's.whatsapp.net', type: 'server_sync', id: newStanzaId(), t: unixSeconds() },
          [node('collection', { name, version: String(version) })],
        ),
      );
    }
  }
}

/** What a mutation says, kept in the phone's view (labels, their chats, archive, pin, mute). */
function record(view: AppStateView, index: string[], action: proto.ISyncActionValue): void {
  const [kind, a, b] = index;
  if (kind === 'label_edit' && a && action.labelEditAction) {
    const l = action.labelEditAction;
    view.labels[a] = {
      name: l.name ?? '',
      ...(l.color != null ? { color: l.color } : {}),
      ...(l.deleted ? { deleted: true } : {}),
    };
  } else if (kind === 'label_jid' && a && b && action.labelAssociationAction) {
    const entry = `${a}|${b}`;
    view.chatLabels = view.chatLabels.filter((e) => e !== entry);
    if (action.labelAssociationAction.labeled) view.chatLabels.push(entry);
  } else if (a && kind === 'archive' && action.archiveChatAction) {
    view.chats[a] = { ...view.chats[a], archived: !!action.archiveChatAction.archived };
  } else if (a && kind === 'pin_v1' && action.pinAction) {
    view.chats[a] = { ...view.chats[a], pinned: !!action.pinAction.pinned };
  } else if (a && kind === 'mute' && action.muteAction) {
    const m = action.muteAction;
    view.chats[a] = { ...view.chats[a], mutedUntil: m.muted ? Number(m.muteEndTimestamp ?? -1) : 0 };
  }
}
