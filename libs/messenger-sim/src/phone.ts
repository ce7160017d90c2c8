import type { BinaryNode, proto } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import { normalizePhone, type Directory, type SimUser } from './directory.js';
import type { SimLogger } from './logger.js';
import { SimForms } from './forms.js';
import { parseCompanionHello, runCodeExchange, sendPrimaryHello, type CodeRequest } from './pairing-code.js';
import {
  completePairing,
  pairDeviceNode,
  parseQr,
  sessionFromRegistration,
  type LinkResult,
  type PairingSession,
} from './pairing.js';
import { Passkeys, type PasskeyLinkView } from './passkey.js';
import { qrPayload } from './qr-image.js';
import { SimError } from './sim-error.js';
import { iqError, iqResult } from './stanza.js';

const PAIRING_WAIT_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface LinkInput {
  phone: string;
  name?: string;
  pictureUrl?: string;
}

/** Told when a link waits for the companion's passkey (a gated account): the request's state. */
export type OnPasskeyPending = (view: PasskeyLinkView) => void;

/**
 * The phones' side of linking: devices waiting to be paired (registration sockets), what they
 * asked for (QR refs, pairing-code requests), and the scan / code entry that links them — through
 * the passkey gate for the accounts that have one (passkey.ts).
 */
export class PhoneLinker {
  private readonly sessions = new Map<ClientConnection, PairingSession>();
  private readonly codeRequests = new Map<ClientConnection, CodeRequest>();
  readonly passkeys: Passkeys;

  constructor(
    private readonly directory: Directory,
    private readonly logger: SimLogger,
    private readonly forms: SimForms = new SimForms(),
  ) {
    this.passkeys = new Passkeys(logger, forms);
  }

  onRegistration(conn: ClientConnection, payload: proto.ClientPayload): void {
    const session = sessionFromRegistration(conn, payload);
    this.sessions.set(conn, session);
    conn
      .query(pairDeviceNode(session))
      .catch((err: unknown) => this.logger.debug({ err }, 'pair-device not acknowledged'));
  }

  onCompanionReg(conn: ClientConnection, iq: BinaryNode, reg: BinaryNode): void {
    const stage = reg.attrs.stage;
    if (stage === 'companion_hello') {
      this.codeRequests.set(conn, parseCompanionHello(conn, iq, reg));
    } else if (stage === 'companion_finish') {
      const request = this.codeRequests.get(conn);
      if (request?.finish) request.finish(iq);
      else conn.send(iqError(iq, 404, 'item-not-found'));
    } else conn.send(iqResult(iq));
  }

  forget(conn: ClientConnection): void {
    this.sessions.delete(conn);
    this.codeRequests.delete(conn);
    this.passkeys.forget(conn);
  }

  /**
   * The phone scans a QR. Resolves once the device is linked; for a passkey-gated account that is
   * after the passkey steps, and `onPasskey` hears at once that they are awaited.
   */
  async linkWithQr(input: LinkInput & { qr: string }, onPasskey?: OnPasskeyPending): Promise<LinkResult> {
    let parsed: ReturnType<typeof parseQr>;
    try {
      parsed = parseQr(qrPayload(input.qr));
    } catch (err) {
      throw new SimError((err as Error).message, 400);
    }
    const session = [...this.sessions.values()].find((s) => s.refs.includes(parsed.ref));
    if (!session) throw new SimError('QR code is unknown or expired', 404);
    if (!session.noiseKey.equals(parsed.noiseKey) || !session.identityKey.equals(parsed.identityKey)) {
      throw new SimError('QR code keys do not match the waiting device', 400);
    }
    if (this.passkeys.gates(input.phone, 'qr')) {
      if (session.busy) throw new SimError('this device is already being linked', 409);
      this.passkeys.requireAuthenticator(input.phone);
      const account = this.ensureAccount(input);
      return this.passkeys.begin({ flow: 'qr', session, account, qrAdvSecret: parsed.advSecret }, onPasskey);
    }
    return this.finishLink(session, input, parsed.advSecret);
  }

  /**
   * The phone takes a pairing code. A passkey-gated account's phone sends primary_hello without
   * its wrapped key and asks for the passkey (the typed code is then not checked: see README).
   */
  async linkWithPairingCode(
    input: LinkInput & { pairingCode: string },
    onPasskey?: OnPasskeyPending,
  ): Promise<LinkResult> {
    const phone = normalizePhone(input.phone);
    const code = input.pairingCode.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
    if (code.length !== 8) throw new SimError('pairingCode must have 8 characters', 400);
    const deadline = Date.now() + PAIRING_WAIT_MS;
    let request: CodeRequest | undefined;
    // requestPairingCode() returns before its companion_hello reached us, so give it a moment
    while (
      !(request = [...this.codeRequests.values()].find((r) => r.phone === phone && !r.finish && !r.passkey))
    ) {
      if (Date.now() > deadline)
        throw new SimError(`no device is waiting for a pairing code for ${phone}`, 404);
      await sleep(25);
    }
    const session = this.sessions.get(request.conn);
    if (!session) throw new SimError('the waiting device disconnected', 409);
    if (this.passkeys.gates(phone, 'code')) {
      if (session.busy) throw new SimError('this device is already being linked', 409);
      this.passkeys.requireAuthenticator(phone);
      const account = this.ensureAccount(input);
      request.passkey = true;
      sendPrimaryHello(request, account.signal.identity.public, undefined, this.forms.server());
      return this.passkeys.begin({ flow: 'code', session, account }, onPasskey);
    }
    const account = this.ensureAccount(input);
    let advSecret: Buffer;
    try {
      advSecret = await runCodeExchange(request, code, account.signal.identity, {
        from: this.forms.server(),
        withoutWrappedKey: this.passkeys.faultsOf(phone).codeWithoutWrappedKey,
      });
    } catch (err) {
      request.finish = undefined;
      throw new SimError((err as Error).message, 400);
    }
    return this.finishLink(session, input, advSecret);
  }

  private async finishLink(
    session: PairingSession,
    input: LinkInput,
    advSecret: Buffer,
  ): Promise<LinkResult> {
    if (session.busy) throw new SimError('this device is already being linked', 409);
    session.busy = true;
    const account = this.ensureAccount(input);
    try {
      const result = await completePairing(session, account, advSecret);
      this.logger.info({ phone: account.phone, device: result.deviceId }, 'device linked');
      return result;
    } catch (err) {
      session.busy = false;
      throw new SimError(`linking failed: ${(err as Error).message}`, 409);
    }
  }

  /** The account a link is for: created when new; a given name or picture replaces its own. */
  ensureAccount({ phone, name, pictureUrl }: LinkInput): SimUser {
    const account =
      this.directory.get(phone) ?? this.directory.upsert({ phone, name: name ?? 'Sim Account' });
    if (!account) throw new SimError('phone is not on WhatsApp', 400);
    if (name) account.name = name;
    if (pictureUrl) account.pictureUrl = pictureUrl;
    return account;
  }
}
