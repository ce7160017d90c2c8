import { randomBytes } from 'node:crypto';
import { getBinaryNodeChild, type BinaryNode, type proto } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import { normalizePhone, type SimUser } from './directory.js';
import type { SimLogger } from './logger.js';
import { SimForms } from './forms.js';
import { completePairing, type LinkResult, type PairingSession } from './pairing.js';
import {
  handoffProof,
  newPrimaryEphemeral,
  openPairingRequest,
  opensCommitment,
  parsePrologue,
  primaryIdentityBytes,
  verificationCode,
  type PrimaryEphemeral,
  type Prologue,
} from './passkey-shortcake.js';
import {
  assertionRefusal,
  PASSKEY_TIMEOUT_MS,
  requestOptionsJson,
  type RegisteredPasskey,
} from './passkey-webauthn.js';
import { SimError } from './sim-error.js';
import { bytesOf, iqError, iqResult, newStanzaId, node, unixSeconds } from './stanza.js';

/**
 * WhatsApp's 2026 passkey gate on linking, as the server and the primary phone play it. For a
 * gated account the phone, instead of pair-success, asks the companion for a WebAuthn assertion
 * by its registered passkey (`passkey_prologue_request`); the companion answers with the
 * assertion and a committed ephemeral identity (`passkey_prologue`), the phone answers with its
 * own (`crsc_continuation`), the companion reveals its nonce (`companion_nonce`) — both now show
 * the same code — and sends its keys with a NEW ADV secret encrypted to the phone
 * (`encrypted_pairing_request`). Once the user confirmed the code on the phone (or at once when the
 * companion proved it held the QR's ADV secret) the phone sends the ordinary pair-success, its
 * device identity HMACed with the new secret. The companion's side is whatsmeow's
 * (tulir/whatsmeow b572e5bc, pair-passkey.go) and whatsapp-rust's (oxidezap/whatsapp-rust
 * 3fb4729e and 32c47d9f, src/passkey/flow.rs); this is its mirror image. Crypto:
 * passkey-webauthn.ts and passkey-shortcake.ts; control routes: passkey-api.ts.
 */

/** Which linking flows of an account need a passkey. */
export type PasskeyGate = 'none' | 'qr' | 'code' | 'both';
export const PASSKEY_GATES: readonly PasskeyGate[] = ['none', 'qr', 'code', 'both'];

export interface PasskeyFaults {
  /** Refuse every assertion, even a valid one. */
  rejectAssertion: boolean;
  /** Accept the prologue but never send `crsc_continuation`. */
  withholdContinuation: boolean;
  /** Send `passkey_prologue_request` without `<passkey_request_options>` (the client must ask). */
  omitOptions: boolean;
  /** Send `primary_hello` without the wrapped primary key even when the code flow is not gated. */
  codeWithoutWrappedKey: boolean;
  /** How long a request stays pending (ms); null: 600 s. */
  timeoutMs: number | null;
}

const noFaults = (): PasskeyFaults => ({
  rejectAssertion: false,
  withholdContinuation: false,
  omitOptions: false,
  codeWithoutWrappedKey: false,
  timeoutMs: null,
});

export type PasskeyStep =
  | 'awaiting-assertion'
  | 'awaiting-nonce'
  | 'awaiting-pairing-request'
  | 'awaiting-confirmation'
  | 'pairing'
  | 'linked'
  | 'expired'
  | 'failed';

const PENDING_STEPS: readonly PasskeyStep[] = [
  'awaiting-assertion',
  'awaiting-nonce',
  'awaiting-pairing-request',
  'awaiting-confirmation',
];

/** One companion being linked through the gate. */
interface PasskeyLink {
  flow: 'qr' | 'code';
  session: PairingSession;
  account: SimUser;
  passkey: RegisteredPasskey;
  challenge: Buffer;
  options: Buffer;
  /** The QR's ADV secret: the key of the optional handoff proof (none in the code flow). */
  qrAdvSecret?: Buffer;
  expiresAt: number;
  timer: NodeJS.Timeout;
  step: PasskeyStep;
  rejections: number;
  lastRejection?: string;
  handoffProof: 'absent' | 'accepted' | 'refused';
  continuationSent: boolean;
  prologue?: Prologue;
  primary?: PrimaryEphemeral;
  code?: string;
  confirmed: boolean;
  newAdvSecret?: Buffer;
  result?: LinkResult;
  error?: string;
  settle: { resolve: (r: LinkResult) => void; reject: (e: Error) => void };
}

interface PasskeyAccount {
  gate: PasskeyGate;
  passkey?: RegisteredPasskey;
  faults: PasskeyFaults;
  link?: PasskeyLink;
}

/** What `GET /accounts/:phone/passkey` shows of an account's latest passkey link. */
export interface PasskeyLinkView {
  flow: 'qr' | 'code';
  step: PasskeyStep;
  expiresAt: string;
  /** The code the phone shows ("XXXX-XXXX"), once the companion revealed its nonce. */
  code: string | null;
  confirmed: boolean;
  continuationSent: boolean;
  handoffProof: 'absent' | 'accepted' | 'refused';
  proofAccepted: boolean;
  rejections: number;
  lastRejection: string | null;
  deviceId?: number;
  jid?: string;
  lid?: string;
  error?: string;
}

export interface PasskeyView {
  phone: string;
  gate: PasskeyGate;
  authenticator: { credentialId: string } | null;
  faults: PasskeyFaults;
  link: PasskeyLinkView | null;
}

const MAX_REFS_PER_CONNECTION = 16;
const REJECTED = 'passkey-rejected';

export class Passkeys {
  private readonly accounts = new Map<string, PasskeyAccount>();
  private readonly links = new Map<ClientConnection, PasskeyLink>();
  /** Refs handed out by `<iq get md><ref/>`, per connection (a prologue must name one). */
  private readonly refs = new Map<ClientConnection, string[]>();

  constructor(
    private readonly logger: SimLogger,
    /** The server's address in the notifications' `from`, with or without its `@` (forms.ts). */
    private readonly forms: SimForms = new SimForms(),
  ) {}

  private entry(phone: string): PasskeyAccount {
    const key = normalizePhone(phone);
    if (!key) throw new SimError('phone must have digits', 400);
    let entry = this.accounts.get(key);
    if (!entry) this.accounts.set(key, (entry = { gate: 'none', faults: noFaults() }));
    return entry;
  }

  setGate(phone: string, gate: PasskeyGate): void {
    if (!PASSKEY_GATES.includes(gate))
      throw new SimError(`gate must be one of ${PASSKEY_GATES.join(', ')}`, 400);
    this.entry(phone).gate = gate;
  }

  setAuthenticator(phone: string, passkey: RegisteredPasskey | undefined): void {
    this.entry(phone).passkey = passkey;
  }

  setFaults(phone: string, faults: Partial<PasskeyFaults>): void {
    const entry = this.entry(phone);
    entry.faults = { ...entry.faults, ...faults };
  }

  /** `DELETE /faults`: every account's passkey faults off (gates and authenticators stay). */
  clearFaults(): void {
    for (const entry of this.accounts.values()) entry.faults = noFaults();
  }

  faultsOf(phone: string): PasskeyFaults {
    return this.accounts.get(normalizePhone(phone))?.faults ?? noFaults();
  }

  /** Whether linking `phone` by this flow needs a passkey. */
  gates(phone: string, flow: 'qr' | 'code'): boolean {
    const gate = this.accounts.get(normalizePhone(phone))?.gate ?? 'none';
    return gate === flow || gate === 'both';
  }

  /** Refuses (409) a gated link of an account without a registered authenticator. */
  requireAuthenticator(phone: string): void {
    if (!this.accounts.get(normalizePhone(phone))?.passkey)
      throw new SimError(
        `${phone} is passkey-gated but has no registered authenticator (POST /accounts/${phone}/passkey/authenticator)`,
        409,
      );
  }

  view(phone: string): PasskeyView {
    const entry = this.entry(phone);
    return {
      phone: normalizePhone(phone),
      gate: entry.gate,
      authenticator: entry.passkey
        ? { credentialId: entry.passkey.credentialId.toString('base64url') }
        : null,
      faults: { ...entry.faults },
      link: entry.link ? linkView(entry.link) : null,
    };
  }

  /**
   * The phone scanned a gated QR (or took a gated pairing code): it asks the companion for a
   * passkey assertion. Resolves when the device is linked; `onPending` hears of the request at once.
   */
  begin(
    input: { flow: 'qr' | 'code'; session: PairingSession; account: SimUser; qrAdvSecret?: Buffer },
    onPending?: (view: PasskeyLinkView) => void,
  ): Promise<LinkResult> {
    const entry = this.entry(input.account.phone);
    if (!entry.passkey) throw new SimError('no registered authenticator', 409);
    const previous = entry.link;
    if (previous && PENDING_STEPS.includes(previous.step) && previous.session !== input.session)
      this.fail(previous, 'superseded by a newer link');
    const timeoutMs = entry.faults.timeoutMs ?? PASSKEY_TIMEOUT_MS;
    const challenge = randomBytes(32);
    let settle!: PasskeyLink['settle'];
    const done = new Promise<LinkResult>((resolve, reject) => (settle = { resolve, reject }));
    done.catch(() => undefined); // a caller that stopped waiting must not leave it unhandled
    const link: PasskeyLink = {
      ...input,
      passkey: entry.passkey,
      challenge,
      options: requestOptionsJson(challenge, entry.passkey.credentialId, timeoutMs),
      expiresAt: Date.now() + timeoutMs,
      timer: setTimeout(() => this.expire(link), timeoutMs).unref(),
      step: 'awaiting-assertion',
      rejections: 0,
      handoffProof: 'absent',
      continuationSent: false,
      confirmed: false,
      settle,
    };
    input.session.busy = true;
    entry.link = link;
    this.links.set(input.session.conn, link);
    input.session.conn.send(
      node(
        'notification',
        { from: this.forms.server(), type: 'passkey_prologue_request', id: newStanzaId(), t: unixSeconds() },
        entry.faults.omitOptions ? undefined : [node('passkey_request_options', {}, link.options)],
      ),
    );
    this.logger.info({ phone: input.account.phone, flow: input.flow }, 'passkey requested for linking');
    onPending?.(linkView(link));
    return done;
  }

  /** The phone confirms the code it shows (`code`, when given, must be that code). */
  confirm(phone: string, code?: string): PasskeyView {
    const link = this.entry(phone).link;
    if (!link || !PENDING_STEPS.includes(link.step))
      throw new SimError(`${phone} has no pending passkey link`, 409);
    if (!link.code)
      throw new SimError('the phone shows no code yet (the companion has not revealed its nonce)', 409);
    const bare = (c: string) => c.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
    if (code !== undefined && bare(code) !== bare(link.code))
      throw new SimError('code does not match the code the phone shows', 400);
    link.confirmed = true;
    if (link.step === 'awaiting-confirmation') this.complete(link);
    return this.view(phone);
  }

  /** An `md` iq of the passkey flow; false when it is not one (the caller answers it as before). */
  handleIq(conn: ClientConnection, iq: BinaryNode, child: BinaryNode): boolean {
    const type = iq.attrs.type;
    if (type === 'get' && child.tag === 'ref') this.issueRef(conn, iq);
    else if (type === 'get' && child.tag === 'passkey_request_options') this.answerOptions(conn, iq);
    else if (type === 'set' && child.tag === 'passkey_prologue') this.onPrologue(conn, iq, child);
    else if (type === 'set' && child.tag === 'companion_nonce') this.onNonce(conn, iq, child);
    else if (type === 'set' && child.tag === 'encrypted_pairing_request')
      this.onPairingRequest(conn, iq, child);
    else return false;
    return true;
  }

  /** The companion's socket closed: a link it had pending fails. */
  forget(conn: ClientConnection): void {
    this.refs.delete(conn);
    const link = this.links.get(conn);
    this.links.delete(conn);
    if (link && PENDING_STEPS.includes(link.step)) this.fail(link, 'the waiting device disconnected');
  }

  close(): void {
    for (const link of this.links.values())
      if (PENDING_STEPS.includes(link.step)) this.fail(link, 'the simulator stopped');
    this.links.clear();
  }

  private issueRef(conn: ClientConnection, iq: BinaryNode): void {
    const ref = `2@${randomBytes(24).toString('base64')}`;
    const refs = this.refs.get(conn) ?? [];
    if (refs.push(ref) > MAX_REFS_PER_CONNECTION) refs.shift();
    this.refs.set(conn, refs);
    conn.send(iqResult(iq, [node('ref', {}, Buffer.from(ref))]));
  }

  /**
   * The link `iq` may act on, or undefined after answering the error itself: 408 once expired, 409
   * for a step out of order on a pending link, else 404.
   */
  private pendingLink(conn: ClientConnection, iq: BinaryNode, step: PasskeyStep): PasskeyLink | undefined {
    const link = this.links.get(conn);
    if (link?.step === step) return link;
    if (link?.step === 'expired') conn.send(iqError(iq, 408, 'passkey-request-expired'));
    else if (link && PENDING_STEPS.includes(link.step)) conn.send(iqError(iq, 409, 'conflict'));
    else conn.send(iqError(iq, 404, 'item-not-found'));
    return undefined;
  }

  /** The pending request's options; 404 when no request is pending (none, or already answered). */
  private answerOptions(conn: ClientConnection, iq: BinaryNode): void {
    const link = this.links.get(conn);
    if (link?.step === 'awaiting-assertion')
      conn.send(iqResult(iq, [node('passkey_request_options', {}, link.options)]));
    else if (link?.step === 'expired') conn.send(iqError(iq, 408, 'passkey-request-expired'));
    else conn.send(iqError(iq, 404, 'item-not-found'));
  }

  private reject(conn: ClientConnection, iq: BinaryNode, link: PasskeyLink, reason: string, text = REJECTED) {
    link.rejections++;
    link.lastRejection = reason;
    this.logger.info({ phone: link.account.phone, reason }, 'passkey step rejected');
    conn.send(iqError(iq, 401, text));
  }

  private onPrologue(conn: ClientConnection, iq: BinaryNode, child: BinaryNode): void {
    const link = this.links.get(conn);
    if (link?.step === 'expired') return conn.send(iqError(iq, 408, 'passkey-request-expired'));
    if (!link || link.step !== 'awaiting-assertion') return conn.send(iqError(iq, 401, REJECTED));
    const payloadBytes = bytesOf(getBinaryNodeChild(child, 'prologue_payload'));
    const refusal =
      (this.faultsOf(link.account.phone).rejectAssertion ? 'fault' : undefined) ??
      assertionRefusal(
        {
          credentialId: bytesOf(getBinaryNodeChild(child, 'credential_id')),
          assertionJson: bytesOf(getBinaryNodeChild(child, 'webauthn_assertion')),
        },
        link.challenge,
        link.passkey,
      );
    const prologue = refusal ?? parsePrologue(payloadBytes);
    if (typeof prologue === 'string') return this.reject(conn, iq, link, prologue);
    if (!this.refs.get(conn)?.includes(prologue.ref)) return this.reject(conn, iq, link, 'ref');

    // The optional handoff proof: keyed by the ADV secret the companion had before this link
    // (whatsmeow b572e5bc: the one in its QR; whatsapp-rust 32c47d9f sends it on a re-link only).
    // The server knows only the QR's, so a proof on the code path can never verify. An accepted
    // proof spares the phone's confirmation; a refused one does not fail the prologue.
    const proof = bytesOf(getBinaryNodeChild(child, 'pairing_handoff_proof'));
    if (proof) {
      const expected = link.qrAdvSecret && handoffProof(link.qrAdvSecret, payloadBytes!);
      link.handoffProof = expected?.equals(proof) ? 'accepted' : 'refused';
    }
    link.prologue = prologue;
    link.primary = newPrimaryEphemeral();
    link.step = 'awaiting-nonce';
    conn.send(iqResult(iq));
    this.logger.info({ phone: link.account.phone, proof: link.handoffProof }, 'passkey assertion accepted');
    if (this.faultsOf(link.account.phone).withholdContinuation) return;
    link.continuationSent = true;
    conn.send(
      node(
        'notification',
        { from: this.forms.server(), type: 'crsc_continuation', id: newStanzaId(), t: unixSeconds() },
        [node('primary_ephemeral_identity', {}, primaryIdentityBytes(link.primary))],
      ),
    );
  }

  private onNonce(conn: ClientConnection, iq: BinaryNode, child: BinaryNode): void {
    const link = this.pendingLink(conn, iq, 'awaiting-nonce');
    if (!link) return;
    const nonce = bytesOf(child);
    if (!nonce || !opensCommitment(link.prologue!, nonce))
      return this.reject(conn, iq, link, 'commitment', 'commitment-mismatch');
    link.code = verificationCode(nonce, link.primary!);
    link.step = 'awaiting-pairing-request';
    conn.send(iqResult(iq));
  }

  private onPairingRequest(conn: ClientConnection, iq: BinaryNode, child: BinaryNode): void {
    const link = this.pendingLink(conn, iq, 'awaiting-pairing-request');
    if (!link) return;
    let request: proto.PairingRequest;
    try {
      request = openPairingRequest(bytesOf(child) ?? Buffer.alloc(0), link.prologue!, link.primary!);
    } catch {
      return this.reject(conn, iq, link, 'pairing-request', 'pairing-request-rejected');
    }
    const same = (a: Uint8Array | null | undefined, b: Buffer | undefined) => !!a && !!b && b.equals(a);
    if (!same(request.companionPublicKey, conn.clientStaticKey))
      return this.reject(conn, iq, link, 'noise-key', 'pairing-request-rejected');
    if (!same(request.companionIdentityKey, link.session.identityKey))
      return this.reject(conn, iq, link, 'identity-key', 'pairing-request-rejected');
    if (request.advSecret?.length !== 32)
      return this.reject(conn, iq, link, 'adv-secret', 'pairing-request-rejected');
    link.newAdvSecret = Buffer.from(request.advSecret);
    conn.send(iqResult(iq));
    if (link.confirmed || link.handoffProof === 'accepted') this.complete(link);
    else link.step = 'awaiting-confirmation';
  }

  /** The phone sends pair-success, HMACed with the new ADV secret, and the link goes on as today. */
  private complete(link: PasskeyLink): void {
    link.step = 'pairing';
    clearTimeout(link.timer);
    completePairing(link.session, link.account, link.newAdvSecret!).then(
      (result) => {
        link.step = 'linked';
        link.result = result;
        this.logger.info({ phone: result.phone, device: result.deviceId }, 'device linked (passkey)');
        link.settle.resolve(result);
      },
      (err: unknown) => this.fail(link, `linking failed: ${(err as Error).message}`),
    );
  }

  private expire(link: PasskeyLink): void {
    if (!PENDING_STEPS.includes(link.step)) return;
    link.step = 'expired';
    link.session.busy = false;
    this.logger.info({ phone: link.account.phone }, 'passkey request expired');
    link.settle.reject(new SimError('the passkey request expired', 408));
  }

  private fail(link: PasskeyLink, error: string): void {
    clearTimeout(link.timer);
    link.step = 'failed';
    link.error = error;
    link.session.busy = false;
    link.settle.reject(new SimError(error, 409));
  }
}

function linkView(link: PasskeyLink): PasskeyLinkView {
  return {
    flow: link.flow,
    step: link.step,
    expiresAt: new Date(link.expiresAt).toISOString(),
    code: link.code ?? null,
    confirmed: link.confirmed,
    continuationSent: link.continuationSent,
    handoffProof: link.handoffProof,
    proofAccepted: link.handoffProof === 'accepted',
    rejections: link.rejections,
    lastRejection: link.lastRejection ?? null,
    ...(link.result ? { deviceId: link.result.deviceId, jid: link.result.jid, lid: link.result.lid } : {}),
    ...(link.error ? { error: link.error } : {}),
  };
}
