import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { createControlApi, type SimulatorInfo } from './control-api.js';
import type { ContactLookupsView } from './contact-lookups.js';
import type {
  ContactInput,
  ContactView,
  InboxMessage,
  UndecryptableMessage,
  UnknownNumbers,
} from './directory.js';
import type { AckErrorFault, RefuseLoginFault, StallFault, UndecryptableFault } from './faults.js';
export type { FormsConfig, HistoryForm, ServerSpelling } from './forms.js';
import type { InboundResult } from './inbound.js';
import type { InboundInput } from './inbound-content.js';
import type { SimLogger } from './logger.js';
import type { LinkResult } from './pairing.js';
import type { LinkInput } from './phone.js';
import type { RestrictInput, RestrictionsView } from './reachout.js';
import { loadState, StateWriter } from './persistence.js';
import type { FormsConfig } from './forms.js';
import type { SimulatorConfig } from './sim-context.js';
import { Simulator, type LinkedDeviceInfo } from './simulator.js';

export interface SimulatorOptions {
  /** Control API (and WebSocket) port; 0 picks a free one. @defaultValue 3100 */
  port?: number;
  /** Bind address of the control API, WebSocket and media host. @defaultValue '127.0.0.1' */
  host?: string;
  /**
   * Host name advertised in `wsUrl`, the media host name and the media certificate, for when
   * clients reach the simulator under another name (containers: bind 0.0.0.0, advertise
   * `sandbox`). @defaultValue `host`, or 127.0.0.1 when `host` is a wildcard
   */
  publicHost?: string;
  /** Port of the HTTPS media host. @defaultValue 0 (any free port) */
  mediaPort?: number;
  /** Delay before delivery receipts. @defaultValue 400 */
  receiptDelayMs?: number | null;
  /** Delay (from the send) before read receipts; null disables them. @defaultValue 900 */
  readDelayMs?: number | null;
  /** What an unseen phone number is: a new WhatsApp user, or not on WhatsApp. @defaultValue 'create' */
  unknownNumbers?: UnknownNumbers;
  /**
   * Keep the simulated network (users, their keys and sessions, linked devices) in this JSON file
   * and start from it: a restarted sandbox still knows the gateway's device (persistence.ts).
   * @defaultValue none: nothing is kept (tests)
   */
  stateFile?: string;
  /**
   * The forms it writes what WhatsApp writes more than one way (forms.ts: history inline or by
   * download, the server's address with or without its `@`), each fixed or `random`.
   * @defaultValue `{ history: 'download', serverAddress: 'at' }`
   */
  forms?: Partial<FormsConfig>;
  /**
   * Publish the media host's origin as `mediaUrl` in /info. False: a sandbox that names no media
   * host (an older or another simulator), whose downloads a sandbox-mode gateway refuses rather
   * than fetch from WhatsApp. @defaultValue true
   */
  publishMediaUrl?: boolean;
  logger?: SimLogger;
}

export interface SimulatorHandle {
  controlUrl: string;
  info: SimulatorInfo;
  simulator: Simulator;
  linkWithQr(input: LinkInput & { qr: string }): Promise<LinkResult>;
  linkWithPairingCode(input: LinkInput & { pairingCode: string }): Promise<LinkResult>;
  unlink(phone: string, deviceId?: number): number[];
  devices(phone: string): LinkedDeviceInfo[];
  inbox(phone: string): InboxMessage[];
  clearInbox(phone: string): void;
  undecryptable(phone: string): UndecryptableMessage[];
  upsertContact(input: ContactInput): ContactView;
  /** The server tells an account's devices a contact's phone <-> LID pair (a lid-mapping notification). */
  notifyLidMapping(contactPhone: string, accountPhone: string): { lid: string; devices: number };
  /** A contact writes to the account: a text, or `{ text?, attachment?, quotedId? }`. */
  sendInbound(fromPhone: string, toPhone: string, content: string | InboundInput): Promise<InboundResult>;
  drop(phone?: string): number;
  refuseLogin(fault: RefuseLoginFault): void;
  ackError(fault: AckErrorFault): void;
  stall(fault: StallFault): void;
  /** A contact's phone cannot decrypt its next message(s): it sends retry receipts (retry-receipts.ts). */
  failDecrypt(fault: UndecryptableFault): void;
  /** Reach-out time lock: cold 1:1 messages get 463 until it ends. */
  restrict(input: RestrictInput): RestrictionsView;
  /** New chats per rolling day for one account (or all); null removes the cap. */
  setNewChatCap(phone: string | undefined, newChatCap: number | null): void;
  restrictions(phone: string): RestrictionsView;
  /** Contact lookups (usync "is this number on WhatsApp?") of an account: count and query times. */
  contactLookups(phone: string): ContactLookupsView;
  /** Privacy tokens the account issued to its contacts (Baileys issues one after a first message). */
  privacyTokens(phone: string): number;
  clearFaults(): void;
  setConfig(update: Partial<SimulatorConfig>): SimulatorConfig;
  close(): Promise<void>;
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '']);

export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const host = options.host ?? '127.0.0.1';
  const publicHost = options.publicHost ?? (WILDCARD_HOSTS.has(host) ? '127.0.0.1' : host);
  const saved = options.stateFile ? loadState(options.stateFile) : undefined;
  const sim = new Simulator(options.logger, { ...options, publicHost, saved });
  await sim.media.listen(host, publicHost, options.mediaPort ?? 0);

  const ready: { info?: SimulatorInfo } = {};
  const server = http.createServer();
  // outlive client keep-alive pools so a reused socket is not closed under a request
  server.keepAliveTimeout = 65_000;
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://sim').pathname !== '/ws/chat') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => sim.accept(ws));
  });
  const api = createControlApi(sim, () => ready.info!);
  server.on('request', (req, res) => {
    sim.changes++;
    void api(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3100, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const writer = options.stateFile
    ? new StateWriter(
        options.stateFile,
        () => sim.changes,
        () => sim.savedState(),
        sim.logger,
      )
    : undefined;
  const controlUrl = `http://${publicHost}:${port}`;
  const info: SimulatorInfo = {
    wsUrl: `ws://${publicHost}:${port}/ws/chat`,
    rootPublicKey: sim.certs.root.public.toString('hex'),
    mediaCaPem: sim.tls.caPem,
    ...(options.publishMediaUrl === false ? {} : { mediaUrl: `https://${sim.media.hostname}` }),
  };
  ready.info = info;

  return {
    controlUrl,
    info,
    simulator: sim,
    linkWithQr: (input) => sim.linkWithQr(input),
    linkWithPairingCode: (input) => sim.linkWithPairingCode(input),
    unlink: (phone, deviceId) => sim.unlink(phone, deviceId),
    devices: (phone) => sim.devices(phone),
    inbox: (phone) => sim.inbox(phone),
    clearInbox: (phone) => sim.clearInbox(phone),
    undecryptable: (phone) => sim.undecryptable(phone),
    upsertContact: (input) => sim.upsertContact(input),
    notifyLidMapping: (contact, account) => sim.notifyLidMapping(contact, account),
    sendInbound: (from, to, content) => sim.sendInbound(from, to, content),
    drop: (phone) => sim.drop(phone),
    refuseLogin: (fault) => sim.faults.refuseLogin(fault),
    ackError: (fault) => sim.faults.ackError(fault),
    stall: (fault) => sim.faults.stall(fault),
    failDecrypt: (fault) => sim.failDecrypt(fault),
    restrict: (input) => sim.restrict(input),
    setNewChatCap: (phone, cap) => sim.setNewChatCap(phone, cap),
    restrictions: (phone) => sim.restrictions(phone),
    contactLookups: (phone) => sim.contactLookupsOf(phone),
    privacyTokens: (phone) => sim.privacyTokensOf(phone),
    clearFaults: () => sim.clearFaults(),
    setConfig: (update) => sim.setConfig(update),
    close: async () => {
      writer?.stop();
      sim.closeAll();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sim.media.close();
    },
  };
}

export { Simulator, SimError } from './simulator.js';
export type { LinkedDeviceInfo } from './simulator.js';
export type { SimulatorConfig } from './sim-context.js';
export type { SimulatorInfo } from './control-api.js';
export type {
  ContactInput,
  ContactView,
  InboxMessage,
  ReceiptMode,
  UndecryptableMessage,
  UnknownNumbers,
} from './directory.js';
export type {
  AckErrorFault,
  RefuseLoginFault,
  StallFault,
  UndecryptableFault,
  UndecryptableMode,
} from './faults.js';
export { PHONE_RETRY_MAX } from './retry-receipts.js';
export type { InboundResult } from './inbound.js';
export type { ContactLookupQuery, ContactLookupsView } from './contact-lookups.js';
export type { AttachmentType, InboundAttachment, InboundInput, InboundMedia } from './inbound-content.js';
export type { InboundContactCard, InboundKindInput } from './message-kinds.js';
export type { CapInfo, RestrictInput, RestrictionsView } from './reachout.js';
export { REACHOUT_REFUSED } from './reachout.js';
export type { LinkResult } from './pairing.js';
export type { PasskeyFaults, PasskeyGate, PasskeyLinkView, PasskeyStep, PasskeyView } from './passkey.js';
export { PASSKEY_ORIGIN, PASSKEY_RP_ID, PASSKEY_TIMEOUT_MS } from './passkey-webauthn.js';
export {
  MAX_COMPANIONS_PER_REQUEST,
  provisionCompanion,
  type CompanionInput,
  type ProvisionedCompanion,
} from './companions.js';
export { SigningKeyPair } from './certificates.js';
export type { LinkInput } from './phone.js';
export type { SimLogger } from './logger.js';
export { silentLogger } from './logger.js';
export { createTlsMaterial, type TlsMaterial } from './tls-certificate.js';
export { encryptLikePhone } from './media-host.js';
export type { CallInput, CallState, SimCall } from './calls.js';
export type { SimReadReceipt } from './read-receipts.js';
export { messageEditKey, type SecretOrigSender } from './secret-edits.js';
