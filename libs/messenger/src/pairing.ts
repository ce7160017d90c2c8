import { EventEmitter } from 'node:events';
import { getBinaryNodeChild, getPlatformId, jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import {
  isServerAddress,
  type ConnectMethod,
  type PasskeyAssertion,
  type PasskeyFailure,
} from '@mgw/contracts';
import { serializeError } from '@mgw/common';
import { loadAuthState, type RedisAuthState } from './auth-state.js';
import { accountName } from './device-socket-events.js';
import { classifyClose } from './disconnect-reason.js';
import { PasskeyLink, PasskeyStepError as PasskeyStepErrorOf, type PasskeyState } from './passkey-link.js';
import { createSocket, type SocketContext, type WASocket } from './socket.js';

export interface PairingOptions extends SocketContext {
  epoch: () => number | undefined;
  method: ConnectMethod;
  /** Required for the pairing-code method (digits, international format). */
  phoneNumber?: string;
  /** QR refreshes (or pairing-code ref rotations) allowed before giving up. */
  qrMaxAttempts: number;
  /** How long each QR lives; Baileys' default (60 s, then 20 s) when unset. */
  qrTimeoutMs?: number;
  /** A passkey-gated link: how long WhatsApp may take to answer the assertion (default 60 s). */
  passkeyContinuationTimeoutMs?: number;
}

export interface PairedAccount {
  phone: string;
  name?: string;
}

export interface PairingEvents {
  /** A new raw QR string (the first, then every refresh). */
  qr: [string];
  'pairing-code': [string];
  /** The phone linked and the credentials are stored; the pairing socket is closed. */
  paired: [PairedAccount];
  /** The pairing ended without a link (QR attempts exhausted, timeout, error, cancel). */
  failed: [{ reason: string }];
  /** The account is passkey-gated: where its link stands now (docs/passkeys.md). */
  passkey: [PasskeyState];
}

/** After a code registration without the wrapped key, how long its passkey request may take. */
const PASSKEY_REQUEST_WAIT_MS = 15_000;

/** How long WhatsApp may take to answer a passkey assertion with the phone's side. */
const PASSKEY_CONTINUATION_TIMEOUT_MS = 60_000;

/**
 * A pairing socket: shows QRs (or asks for a pairing code) until the phone links. On success
 * WhatsApp closes it with 515 "restart required"; we do not reconnect here: the credentials are
 * stored and the sender that takes the device's lease opens the long-lived socket.
 */
export class PairingSession extends EventEmitter<PairingEvents> {
  private sock: WASocket | undefined;
  private auth: RedisAuthState | undefined;
  private qrCount = 0;
  private paired = false;
  private finished = false;
  private passkey: PasskeyLink | undefined;

  constructor(private readonly opts: PairingOptions) {
    super();
  }

  /** Opens the socket; a pairing cancelled before (or while loading its state) opens none. */
  async start(): Promise<void> {
    if (this.finished) return;
    this.auth = await loadAuthState({
      redis: this.opts.redis,
      encryption: this.opts.encryption,
      deviceId: this.opts.deviceId,
      epoch: this.opts.epoch,
    });
    if (this.finished) return;
    const sock = createSocket(this.opts, this.auth, { qrTimeout: this.opts.qrTimeoutMs });
    this.sock = sock;
    this.listenForPasskey(sock, this.auth);
    sock.ev.on('connection.update', (u) => {
      if (u.qr) {
        this.onQr(u.qr).catch((err: unknown) =>
          this.opts.logger.warn('pairing QR not handled', {
            deviceId: this.opts.deviceId,
            err: serializeError(err),
          }),
        );
      }
      if (u.isNewLogin) this.paired = true;
      if (u.connection === 'close') {
        this.onClose(u.lastDisconnect?.error).catch((err: unknown) =>
          this.opts.logger.warn('pairing close not handled', {
            deviceId: this.opts.deviceId,
            err: serializeError(err),
          }),
        );
      }
    });
  }

  /** Ends the pairing (forceNew, shutdown); emits `failed` with the reason unless already done. */
  async cancel(reason = 'cancelled'): Promise<void> {
    this.finish('failed', { reason });
    await this.sock?.end(undefined);
  }

  /** Where a passkey-gated link stands (undefined for an ungated one, or before WhatsApp asked). */
  get passkeyState(): PasskeyState | undefined {
    return this.passkey?.current;
  }

  /**
   * The operator's assertion for the passkey request: true when WhatsApp took it (see
   * PasskeyLink.submitAssertion for what it throws).
   */
  async submitPasskey(assertion: PasskeyAssertion): Promise<boolean> {
    if (!this.passkey || this.finished)
      throw new PasskeyStepErrorOf('no passkey request waits on this pairing');
    return this.passkey.submitAssertion(assertion);
  }

  /** The operator compared the phone's code with the link's: the link finishes. */
  async confirmPasskey(code?: string): Promise<void> {
    if (!this.passkey || this.finished)
      throw new PasskeyStepErrorOf('no passkey request waits on this pairing');
    await this.passkey.confirm(code);
  }

  /**
   * WhatsApp's passkey notifications, read off the socket's frames (Baileys rc14 acknowledges
   * and drops them): the link they start is this pairing's from then on.
   */
  private listenForPasskey(sock: WASocket, auth: RedisAuthState): void {
    const link = () => {
      if (!this.passkey) {
        this.passkey = new PasskeyLink({
          query: (node) => sock.query(node),
          creds: auth.state.creds,
          saveCreds: () => sock.ev.emit('creds.update', { advSecretKey: auth.state.creds.advSecretKey }),
          platformType: Number(getPlatformId('Chrome')),
          continuationTimeoutMs: this.opts.passkeyContinuationTimeoutMs ?? PASSKEY_CONTINUATION_TIMEOUT_MS,
          logger: this.opts.logger,
        });
        this.passkey.on('state', (state) => this.emit('passkey', state));
        this.passkey.once('failed', (reason: PasskeyFailure) => {
          this.finish('failed', { reason });
          void sock.end(undefined);
        });
      }
      return this.passkey;
    };
    // Only WhatsApp's own server may start or continue it (whatsmeow ignores any other sender),
    // its address parsed as whatsmeow's pair-passkey.go does: `@s.whatsapp.net` and
    // `s.whatsapp.net` are both the server (@mgw/contracts jid.ts).
    const fromServer = (node: BinaryNode) => isServerAddress(node.attrs.from);
    sock.ws.on('CB:notification,type:passkey_prologue_request', (node: BinaryNode) => {
      if (!fromServer(node) || this.finished) return;
      void link()
        .onRequest(node)
        .catch((err: unknown) =>
          this.opts.logger.warn('passkey request not handled', {
            deviceId: this.opts.deviceId,
            err: serializeError(err),
          }),
        );
    });
    // A code registration without the wrapped key is a gated account's: its passkey request
    // follows. Should none come, the link cannot go on (the patched Baileys no longer throws).
    sock.ws.on('CB:notification,type:link_code_companion_reg', (node: BinaryNode) => {
      const reg = getBinaryNodeChild(node, 'link_code_companion_reg');
      if (!fromServer(node) || this.finished || !reg) return;
      if (getBinaryNodeChild(reg, 'link_code_pairing_wrapped_primary_ephemeral_pub')) return;
      const timer = setTimeout(() => {
        if (this.passkey?.current || this.finished) return;
        this.opts.logger.warn('pairing code: no wrapped key and no passkey request', {
          deviceId: this.opts.deviceId,
        });
        this.finish('failed', { reason: 'pairing_code_failed' });
        void sock.end(undefined);
      }, PASSKEY_REQUEST_WAIT_MS);
      timer.unref();
    });
    sock.ws.on('CB:notification,type:crsc_continuation', (node: BinaryNode) => {
      if (!fromServer(node) || this.finished || !this.passkey) return;
      void this.passkey.onContinuation(node).catch((err: unknown) =>
        this.opts.logger.warn('passkey continuation not handled', {
          deviceId: this.opts.deviceId,
          err: serializeError(err),
        }),
      );
    });
  }

  private async onQr(qr: string): Promise<void> {
    // A passkey-gated link waits for its ceremony, not for a QR (the patched Baileys stops them).
    if (this.passkey?.current) return;
    this.qrCount += 1;
    if (this.qrCount > this.opts.qrMaxAttempts) {
      this.finish('failed', { reason: 'qr_attempts_exhausted' });
      await this.sock?.end(undefined);
      return;
    }
    if (this.opts.method === 'qrCode') {
      this.emit('qr', qr);
      return;
    }
    if (this.qrCount === 1 && this.sock) {
      try {
        const code = await this.sock.requestPairingCode(this.opts.phoneNumber ?? '');
        this.emit('pairing-code', code);
      } catch (err) {
        this.opts.logger.warn('pairing code request failed', {
          deviceId: this.opts.deviceId,
          err: serializeError(err),
        });
        this.finish('failed', { reason: 'pairing_code_failed' });
        await this.sock?.end(undefined);
      }
    }
  }

  private async onClose(error: unknown): Promise<void> {
    const info = classifyClose(error);
    const auth = this.auth;
    if ((this.paired || auth?.registered) && auth) {
      try {
        // The creds.update save is fire-and-forget; make sure the final creds are stored.
        await auth.saveCreds();
        const me = auth.state.creds.me;
        this.finish('paired', {
          phone: jidDecode(me?.id ?? '')?.user ?? '',
          name: accountName(me?.name) ?? me?.verifiedName,
        });
      } catch (err) {
        this.opts.logger.error('paired but credentials not stored', {
          deviceId: this.opts.deviceId,
          err: serializeError(err),
        });
        this.finish('failed', { reason: 'credentials_not_stored' });
      }
      return;
    }
    // A pairing that could not reach WhatsApp through the device's proxy says so (`proxy_<kind>`).
    const proxyFailure = this.opts.proxy?.takeFailure();
    this.finish('failed', {
      reason: proxyFailure
        ? `proxy_${proxyFailure.kind}`
        : info.action === 'reconnect' && info.code === 408
          ? 'qr_timeout'
          : info.reason,
    });
  }

  private finish<E extends 'paired' | 'failed'>(event: E, ...args: PairingEvents[E]): void {
    if (this.finished) return;
    this.finished = true;
    this.passkey?.close();
    (this.emit as (e: E, ...a: PairingEvents[E]) => boolean)(event, ...args);
  }
}
