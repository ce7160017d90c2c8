import { jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import { createNoiseCertChain, type NoiseCertChain } from './certificates.js';
import { ClientConnection, type ConnectionHost } from './client-connection.js';
import {
  Directory,
  MAX_PENDING_PER_DEVICE,
  normalizePhone,
  type CompanionDevice,
  type ContactInput,
  type ContactView,
  type InboxMessage,
  type ReceiptMode,
  type SimUser,
  type UndecryptableMessage,
  type UnknownNumbers,
} from './directory.js';
import { ContactLookups, type ContactLookupsView } from './contact-lookups.js';
import { Faults, UNDECRYPTABLE_MODES, type UndecryptableFault } from './faults.js';
import { SimForms, type FormsConfig } from './forms.js';
import { forgetFailing } from './retry-receipts.js';
import { SimGroups } from './groups.js';
import { SimStatuses } from './status-broadcast.js';
import { SimNewsletters } from './newsletters.js';
import { SimAppState } from './app-state.js';
import { sendFromContact, type InboundResult } from './inbound.js';
import { checkInboundInput, type InboundInput } from './inbound-content.js';
import { routeIq } from './iq-router.js';
import { earlySuccess, handleLogin } from './login.js';
import { silentLogger, type SimLogger } from './logger.js';
import { MediaHost } from './media-host.js';
import { handleClientMessage } from './messages.js';
import { handleClientCall } from './calls.js';
import { clearPresence, presenceOf, recordChatState, type PresenceUpdate } from './presence.js';
import { handlePresence } from './presence-subscriptions.js';
import { blocks } from './account-profile.js';
import { recordReadReceipt } from './read-receipts.js';
import { inboundRevision, rememberSent } from './revisions.js';
import { rememberSecret, secretEncryptedEdit, type SecretOrigSender } from './secret-edits.js';
import { notifyCapping, notifyTimelock } from './mex.js';
import { lidAddressed, notifyLidMapping } from './lid-chats.js';
import { changeNumber } from './number-changes.js';
import type { ClientHandshakeResult } from './noise-server.js';
import type { LinkResult } from './pairing.js';
import { PhoneLinker, type LinkInput, type OnPasskeyPending } from './phone.js';
import { lockFrom, Reachout, type RestrictInput, type RestrictionsView } from './reachout.js';
import type { SimulatorConfig } from './sim-context.js';
import { SimError } from './sim-error.js';
import { firstChild, iqResult, node } from './stanza.js';
import { createMediaTlsMaterial, type TlsMaterial } from './tls-certificate.js';
import { keyPairOf, restoreDirectory, stateOf, type SavedState } from './persistence.js';
import type { WebSocket } from 'ws';

export { SimError };

export interface LinkedDeviceInfo {
  id: number;
  jid: string;
  lid: string;
  keyIndex: number;
  connected: boolean;
  linkedAt: string;
  /** One-time pre-keys the device uploaded that no contact has fetched yet. */
  preKeys: number;
  /** How many times the server told it they ran low (the `encrypt` notification). */
  preKeysLowNotified: number;
}

const RECEIPT_MODES: readonly ReceiptMode[] = ['read', 'delivered', 'none'];

/** The simulated WhatsApp service: directory, connected devices, pairing, faults and media. */
export class Simulator implements ConnectionHost {
  readonly directory: Directory;
  readonly faults = new Faults();
  /** The forms it writes what can be written more than one way (forms.ts). */
  readonly forms: SimForms;
  /** Contact lookups (usync "is this number on WhatsApp?") per account. */
  readonly contactLookups = new ContactLookups();
  /** Privacy tokens each account issued to its contacts (`privacy` set iqs), by account phone. */
  readonly privacyTokensIssued = new Map<string, number>();
  /** App-state sync: chat state and business labels, as encrypted patches (app-state.ts). */
  readonly appState: SimAppState = new SimAppState(this);
  /** Group chats: metadata, members, sender-key messages (groups.ts). */
  readonly groups: SimGroups = new SimGroups(this);
  /** Status updates posted by linked devices and contacts (status-broadcast.ts). */
  readonly statuses = new SimStatuses();
  /** Channels (newsletters): their `w:mex` queries (newsletters.ts). */
  readonly newsletters = new SimNewsletters();
  readonly reachout = new Reachout({
    lockChanged: (phone) => notifyTimelock(this, phone),
    newChatOpened: (phone) => {
      if (this.reachout.cap(phone) !== undefined) notifyCapping(this, phone);
    },
  });
  readonly certs: NoiseCertChain;
  readonly tls: TlsMaterial & { hosts: string[] };
  readonly media: MediaHost;
  readonly config: SimulatorConfig;
  private readonly connections = new Set<ClientConnection>();
  readonly linker: PhoneLinker;
  /**
   * Counts what may have changed the state (a client's stanza or login, a control API call):
   * the state file is rewritten only when it moved (persistence.ts).
   */
  changes = 0;
  /**
   * When client sockets were accepted (their WebSocket upgrade), the last 50,000 at most: how fast
   * a gateway opens its fleet's connections, as WhatsApp sees it (`GET /connections/opened`, the
   * density bench's connect rate).
   */
  readonly socketOpens: number[] = [];

  constructor(
    readonly logger: SimLogger = silentLogger,
    options: {
      unknownNumbers?: UnknownNumbers;
      /** Host name clients use to reach this simulator (also put in the media certificate). */
      publicHost?: string;
      receiptDelayMs?: number | null;
      readDelayMs?: number | null;
      /** A state saved by an earlier simulator (persistence.ts): its users, devices and keys. */
      saved?: SavedState;
      /** The forms it writes in (forms.ts); POST /forms changes them. */
      forms?: Partial<FormsConfig>;
    } = {},
  ) {
    const { saved } = options;
    this.forms = new SimForms(options.forms);
    this.directory = new Directory(options.unknownNumbers ?? 'create');
    if (saved) restoreDirectory(this.directory, saved);
    this.certs = createNoiseCertChain(saved && keyPairOf(saved.root));
    const hosts = options.publicHost ? [options.publicHost] : [];
    // the saved media CA, unless the certificate was made for other host names
    this.tls =
      saved && JSON.stringify(saved.tls.hosts) === JSON.stringify(hosts)
        ? saved.tls
        : { ...createMediaTlsMaterial(hosts), hosts };
    this.media = new MediaHost(this.tls, logger);
    this.linker = new PhoneLinker(this.directory, logger, this.forms);
    this.config = {
      receiptDelayMs: options.receiptDelayMs === undefined ? 400 : options.receiptDelayMs,
      readDelayMs: options.readDelayMs === undefined ? 900 : options.readDelayMs,
    };
  }

  accept(ws: WebSocket): void {
    const conn = new ClientConnection(ws, this.certs, this, this.logger);
    if (this.socketOpens.push(conn.openedAt) > 50_000) this.socketOpens.splice(0, 10_000);
    this.connections.add(conn);
  }

  onHandshake(conn: ClientConnection, { payload }: ClientHandshakeResult): void {
    this.changes++;
    if (payload.devicePairingData) {
      this.linker.onRegistration(conn, payload);
      if (this.faults.takeEarlySuccess()) earlySuccess(conn);
    } else handleLogin(this, conn, payload);
  }

  onNode(conn: ClientConnection, stanza: BinaryNode): void {
    this.changes++;
    if (stanza.tag === 'iq') routeIq(this, conn, stanza);
    else if (stanza.tag === 'message') handleClientMessage(this, conn, stanza);
    else if (stanza.tag === 'chatstate') recordChatState(this, conn, stanza);
    else if (stanza.tag === 'presence') handlePresence(this, conn, stanza);
    else if (stanza.tag === 'call') handleClientCall(this, conn, stanza);
    else if (stanza.tag === 'receipt' && (stanza.attrs.type === 'read' || stanza.attrs.type === 'read-self'))
      recordReadReceipt(this, conn, stanza);
    else if (stanza.tag === 'receipt' && stanza.attrs.type === 'retry') {
      this.logger.warn(
        { id: stanza.attrs.id, from: conn.account?.phone },
        'client could not decrypt a message (retry receipt)',
      );
    }
  }

  onClose(conn: ClientConnection): void {
    this.connections.delete(conn);
    this.linker.forget(conn);
    if (conn.device?.connection === conn) conn.device.connection = undefined;
  }

  /** Sends to a device's live socket, or keeps the stanza until its next login. */
  deliverToDevice(device: CompanionDevice, stanza: BinaryNode): void {
    const conn = device.connection;
    if (conn && !conn.closed) conn.send(stanza);
    else if (device.pending.push(stanza) > MAX_PENDING_PER_DEVICE) device.pending.shift();
  }

  handleMdIq(conn: ClientConnection, iq: BinaryNode): void {
    const child = firstChild(iq);
    if (child?.tag === 'link_code_companion_reg') {
      this.linker.onCompanionReg(conn, iq, child);
      return;
    }
    // the passkey gate's iqs (ref, passkey_request_options, passkey_prologue, …: passkey.ts)
    if (child && this.linker.passkeys.handleIq(conn, iq, child)) return;
    if (child?.tag === 'remove-companion-device') {
      const jid = jidDecode(child.attrs.jid ?? '');
      const account = conn.account;
      if (account && jid?.device !== undefined && account.devices.delete(jid.device)) {
        this.logger.info({ phone: account.phone, device: jid.device }, 'companion logged out');
      }
      conn.send(iqResult(iq));
      return;
    }
    conn.send(iqResult(iq));
  }

  /** The phone removes linked devices (all, or one): their sockets get 401 device_removed. */
  unlink(phone: string, deviceId?: number): number[] {
    const account = this.requireUser(phone);
    const removed: number[] = [];
    for (const device of [...account.devices.values()]) {
      if (deviceId !== undefined && device.id !== deviceId) continue;
      account.devices.delete(device.id);
      removed.push(device.id);
      device.connection?.endWith(
        node('stream:error', { code: '401' }, [node('conflict', { type: 'device_removed' })]),
      );
    }
    return removed;
  }

  /** Kills device sockets without a goodbye, like a network drop. */
  drop(phone?: string): number {
    let dropped = 0;
    for (const conn of [...this.connections]) {
      if (!conn.account || (phone && conn.account.phone !== normalizePhone(phone))) continue;
      conn.terminate();
      dropped++;
    }
    return dropped;
  }

  inbox(phone: string): InboxMessage[] {
    return [...(this.directory.get(phone)?.inbox ?? [])];
  }

  clearInbox(phone: string): void {
    const user = this.directory.get(phone);
    if (user) {
      user.inbox.length = 0;
      user.undecryptable.length = 0;
    }
    clearPresence(this, phone);
  }

  /** The chat states ("typing…") linked devices showed `phone`, oldest first (see presence.ts). */
  presence(phone: string): PresenceUpdate[] {
    return presenceOf(this, phone);
  }

  undecryptable(phone: string): UndecryptableMessage[] {
    return [...(this.directory.get(phone)?.undecryptable ?? [])];
  }

  devices(phone: string): LinkedDeviceInfo[] {
    const account = this.requireUser(phone);
    return [...account.devices.values()].map((d) => ({
      id: d.id,
      jid: `${account.phone}:${d.id}@s.whatsapp.net`,
      lid: `${account.lid}:${d.id}@lid`,
      keyIndex: d.keyIndex,
      connected: !!d.connection && !d.connection.closed,
      linkedAt: d.linkedAt,
      preKeys: d.preKeys.size,
      preKeysLowNotified: d.preKeysLowNotified ?? 0,
    }));
  }

  upsertContact(input: ContactInput): ContactView {
    if (!input.phone || !normalizePhone(input.phone)) throw new SimError('phone is required', 400);
    if (input.receipts !== undefined && !RECEIPT_MODES.includes(input.receipts)) {
      throw new SimError(`receipts must be one of ${RECEIPT_MODES.join(', ')}`, 400);
    }
    if (input.addressing !== undefined && input.addressing !== 'pn' && input.addressing !== 'lid')
      throw new SimError('addressing must be pn or lid', 400);
    const user = this.directory.upsert(input);
    return user
      ? {
          phone: user.phone,
          lid: user.lid,
          name: user.name,
          pictureUrl: user.pictureUrl,
          receipts: user.receipts,
          addressing: lidAddressed(user) ? 'lid' : 'pn',
          hidePhone: user.hidePhone,
          onWhatsApp: true,
        }
      : { phone: normalizePhone(input.phone), onWhatsApp: false };
  }

  /**
   * The phone scans a QR; resolves once the device is linked — for a passkey-gated account after
   * the passkey steps (`onPasskey` hears at once that they are awaited; passkey.ts).
   */
  linkWithQr(input: LinkInput & { qr: string }, onPasskey?: OnPasskeyPending): Promise<LinkResult> {
    return this.linker.linkWithQr(input, onPasskey);
  }

  linkWithPairingCode(
    input: LinkInput & { pairingCode: string },
    onPasskey?: OnPasskeyPending,
  ): Promise<LinkResult> {
    return this.linker.linkWithPairingCode(input, onPasskey);
  }

  /** The passkey gate on linking: per account gate, authenticator, faults, pending link (passkey.ts). */
  get passkeys() {
    return this.linker.passkeys;
  }

  /**
   * The server tells `accountPhone`'s devices `contactPhone`'s phone <-> LID pair (a `lid-mapping`
   * notification, as when WhatsApp links a contact's profiles). Answers how many devices it went to.
   */
  notifyLidMapping(contactPhone: string, accountPhone: string): { lid: string; devices: number } {
    const contact = this.directory.get(contactPhone);
    if (!contact) throw new SimError(`${contactPhone} is not a contact`, 404);
    const account = this.requireUser(accountPhone);
    return { lid: `${contact.lid}@lid`, devices: notifyLidMapping(this, contact, account) };
  }

  /** A contact changes its number, its LID kept (number-changes.ts). */
  changeNumber(phone: string, newPhone: string): ContactView {
    const user = changeNumber(this, phone, newPhone);
    return this.upsertContact({ phone: user.phone });
  }

  /** A contact writes to an account: a text, or `{ text?, attachment?, quotedId? }`. */
  async sendInbound(
    fromPhone: string,
    toPhone: string,
    content: string | InboundInput,
  ): Promise<InboundResult> {
    const input = typeof content === 'string' ? { text: content } : content;
    checkInboundInput(input);
    const contact = this.directory.lookupOrCreate(fromPhone);
    if (!contact) throw new SimError(`${fromPhone} is not on WhatsApp`, 404);
    const account = this.requireUser(toPhone);
    if (account.devices.size === 0) throw new SimError(`${toPhone} has no linked device`, 409);
    // WhatsApp never delivers what a blocked contact writes.
    if (blocks(account, contact)) throw new SimError(`${toPhone} blocked ${fromPhone}`, 409);
    const { secret, ...sent } = await sendFromContact(this, contact, account, input);
    rememberSent(contact, sent.id);
    if (secret) rememberSecret(contact, sent.id, secret);
    return sent;
  }

  /**
   * A contact edits (`text`) or deletes for everyone (no `text`) a message it sent the account;
   * refused (409) for a message it never sent or past WhatsApp's window (see revisions.ts).
   */
  async reviseInbound(
    fromPhone: string,
    toPhone: string,
    id: string,
    text?: string,
    /** An edit sent secret-encrypted (secret-edits.ts), its original's sender as `origSender` names it. */
    secret?: { origSender?: SecretOrigSender },
  ): Promise<InboundResult> {
    const contact = this.directory.get(fromPhone);
    const account = this.requireUser(toPhone);
    if (!contact) throw new SimError(`${fromPhone} sent no message ${id}`, 409);
    if (text !== undefined && (typeof text !== 'string' || !text))
      throw new SimError('text must be a non-empty string', 400);
    const message = inboundRevision(contact, `${account.phone}@s.whatsapp.net`, id, text);
    if ('refused' in message) throw new SimError(message.refused, 409);
    if (secret && text === undefined) throw new SimError('only an edit is sent secret-encrypted', 400);
    const sent = secret ? secretEncryptedEdit(contact, message, secret.origSender) : message;
    return sendFromContact(this, contact, account, {}, sent);
  }

  /** Puts an account under a reach-out time lock; its devices are notified when it starts and ends. */
  restrict(input: RestrictInput): RestrictionsView {
    const account = this.requireUser(input.phone ?? '');
    this.reachout.restrict(account.phone, lockFrom(input));
    return this.reachout.view(account.phone);
  }

  /** Caps the new chats per rolling day of one account (or all); null removes the cap. */
  setNewChatCap(phone: string | undefined, newChatCap: number | null): void {
    if (newChatCap !== null && (!Number.isInteger(newChatCap) || newChatCap < 0))
      throw new SimError('newChatCap must be an integer >= 0 or null', 400);
    const account = phone ? this.requireUser(phone) : undefined;
    this.reachout.setCap(account?.phone, newChatCap);
    this.notifyCaps(account ? [account.phone] : 'all');
  }

  private notifyCaps(phones: string[] | 'all'): void {
    const targets = phones === 'all' ? this.directory.users().map((u) => u.phone) : phones;
    for (const phone of targets) notifyCapping(this, phone);
  }

  restrictions(phone: string): RestrictionsView {
    return this.reachout.view(this.requireUser(phone).phone);
  }

  /** The contact lookups the account's devices made: how many numbers, and when each query came. */
  contactLookupsOf(phone: string): ContactLookupsView {
    return this.contactLookups.view(this.requireUser(phone).phone);
  }

  /** How many privacy tokens the account issued to its contacts (one per contact is WhatsApp Web's pace). */
  privacyTokensOf(phone: string): number {
    return this.privacyTokensIssued.get(this.requireUser(phone).phone) ?? 0;
  }

  /** A contact's phone fails to decrypt its next message(s) and sends retry receipts (retry-receipts.ts). */
  failDecrypt(fault: UndecryptableFault): void {
    if (fault.mode !== undefined && !UNDECRYPTABLE_MODES.includes(fault.mode))
      throw new SimError(`mode must be one of ${UNDECRYPTABLE_MODES.join(', ')}`, 400);
    if (fault.delayMs !== undefined && (typeof fault.delayMs !== 'number' || fault.delayMs < 0))
      throw new SimError('delayMs must be a number >= 0', 400);
    this.faults.undecryptable(fault);
  }

  clearFaults(): void {
    this.faults.clear();
    this.passkeys.clearFaults();
    for (const user of this.directory.users()) forgetFailing(user);
    this.notifyCaps(this.reachout.clearFaults());
  }

  setConfig(update: Partial<SimulatorConfig>): SimulatorConfig {
    for (const key of ['receiptDelayMs', 'readDelayMs'] as const) {
      const value = update[key];
      if (value === undefined) continue;
      if (value !== null && (typeof value !== 'number' || value < 0))
        throw new SimError(`${key} must be a number >= 0 or null`, 400);
      this.config[key] = value;
    }
    return { ...this.config };
  }

  /** What a state file keeps (persistence.ts). */
  savedState(): SavedState {
    return stateOf(this.directory, this.certs.root, this.tls);
  }

  closeAll(): void {
    this.reachout.close();
    this.passkeys.close();
    for (const conn of [...this.connections]) conn.terminate();
  }

  private requireUser(phone: string): SimUser {
    const user = this.directory.get(phone);
    if (!user) throw new SimError(`unknown phone ${phone}`, 404);
    return user;
  }
}
