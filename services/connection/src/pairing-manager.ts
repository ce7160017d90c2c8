import { Subscription, serializeError, type RedisClient, type SubscriptionOptions } from '@mgw/common';
import {
  ERRORS,
  keys,
  type ConnectRequest,
  type ConnectionCommand,
  type ConnectionReply,
} from '@mgw/contracts';
import { hasLinkedCredentials } from '@mgw/messenger';
import { LINKED_CONNECTING, codeReply, pairingEndedReply, sameRequest } from './pairing-replies.js';
import { isPairingRunning, readPairing, type PairingRecord } from '@mgw/store';
import { FIRST_CODE_TIMEOUT_MS, startPairing, type LocalPairing, type PairingDeps } from './pairing-start.js';
import { answerPasskey } from './passkey-commands.js';

export type { PairingDeps } from './pairing-start.js';

/** How long a connect waits for another replica to end its pairing (forceNew, disconnect). */
const REMOTE_CANCEL_WAIT_MS = 5_000;
const POLL_MS = 100;
/** A connect joins again after its pairing was replaced (forceNew) at most this often. */
const MAX_REJOINS = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Pairing sockets: at most one per device over all replicas (the one holding the device's lease).
 * Every connect — the one that started the pairing, a second one on this replica or another —
 * reads the pairing record (`keys.pairing`) and answers its first QR / pairing code as soon as
 * it is there, so concurrent connects get the same code at once instead of waiting for the lease.
 */
export class PairingManager {
  private readonly local = new Map<string, LocalPairing>();
  private commands?: Subscription;

  constructor(private readonly deps: PairingDeps) {}

  get active(): number {
    return this.local.size;
  }

  /**
   * Ends this replica's pairings when another replica asks (forceNew, disconnect). Resolves once
   * Redis has confirmed the subscription (kept through reconnects).
   */
  async listen(subscriber: RedisClient, gauge?: SubscriptionOptions['gauge']): Promise<void> {
    this.commands = new Subscription({
      client: subscriber,
      channels: [keys.connectionCommands()],
      onMessage: (_channel, raw) => {
        let cmd: ConnectionCommand;
        try {
          cmd = JSON.parse(raw) as ConnectionCommand;
        } catch {
          return;
        }
        if (cmd.type === 'cancel-pairing') {
          this.cancel(cmd.deviceId, cmd.reason, cmd.pairingId).catch((err: unknown) =>
            this.deps.logger.warn('pairing not cancelled', {
              deviceId: cmd.deviceId,
              err: serializeError(err),
            }),
          );
          return;
        }
        const p = this.local.get(cmd.deviceId);
        // Another replica's pairing (or an ended one): its own replica answers.
        if (!p || p.pairingId !== cmd.pairingId) return;
        void answerPasskey(this.deps, p, cmd);
      },
      logger: this.deps.logger,
      gauge,
    });
    await this.commands.start();
  }

  /** Why other replicas' requests are not heard now (undefined while they are). */
  get listenProblem(): string | undefined {
    return this.commands ? this.commands.problem : 'not listening';
  }

  /** A connect request when the device is not linked (or forceNew logged it out). */
  async connect(req: ConnectRequest): Promise<ConnectionReply> {
    const { redis, leases, config } = this.deps;
    const { deviceId } = req;
    // A forceNew must not answer the pairing it just ended.
    const discarded = req.forceNew ? await this.cancelAnywhere(deviceId, 'force_new') : undefined;
    const leaseDeadline = Date.now() + config.messenger.lease.ttlMs + 1000;
    let rejoins = 0;
    for (;;) {
      const rec = await readPairing(redis, deviceId);
      let joinId: string | undefined;
      let startedAt = 0;
      if (isPairingRunning(rec) && rec.pairingId !== discarded && (await this.isLive(deviceId, rec))) {
        if (!sameRequest(req, rec))
          return { success: false, error: ERRORS.pairingOtherMethod, httpStatus: 409 };
        ({ pairingId: joinId, startedAt } = rec);
      } else {
        const lease = await leases.acquire(deviceId);
        if (lease) ({ pairingId: joinId, startedAt } = await startPairing(this.deps, this.local, req, lease));
        else if (await hasLinkedCredentials(redis, deviceId, this.deps.encryption)) return LINKED_CONNECTING;
        // A crashed replica's lease (or a sender's, still ending) runs out within its TTL.
        else if (Date.now() >= leaseDeadline)
          return { success: false, error: ERRORS.deviceBusy, httpStatus: 409 };
      }
      if (joinId) {
        const out = await this.join(req, joinId, startedAt);
        if (out !== 'replaced') return out;
        if (++rejoins > MAX_REJOINS) return pairingEndedReply('force_new');
        continue;
      }
      await sleep(200);
    }
  }

  /**
   * Ends the device's pairing wherever it runs: here directly, on another live replica through
   * `keys.connectionCommands()` (waiting a few seconds for it to end). Returns its id, if any.
   */
  async cancelAnywhere(deviceId: string, reason: string): Promise<string | undefined> {
    const own = await this.cancel(deviceId, reason);
    if (own) return own;
    const rec = await readPairing(this.deps.redis, deviceId);
    if (!isPairingRunning(rec) || !(await this.isLive(deviceId, rec))) return undefined;
    const cmd: ConnectionCommand = { type: 'cancel-pairing', deviceId, pairingId: rec.pairingId, reason };
    await this.deps.redis.publish(keys.connectionCommands(), JSON.stringify(cmd));
    const until = Date.now() + REMOTE_CANCEL_WAIT_MS;
    while (Date.now() < until) {
      const cur = await readPairing(this.deps.redis, deviceId);
      if (cur?.pairingId !== rec.pairingId || !isPairingRunning(cur)) break;
      await sleep(POLL_MS);
    }
    return rec.pairingId;
  }

  /** Ends this replica's pairing of a device (only `pairingId`'s when given); returns its id. */
  async cancel(deviceId: string, reason: string, pairingId?: string): Promise<string | undefined> {
    const p = this.local.get(deviceId);
    if (!p || (pairingId && p.pairingId !== pairingId)) return undefined;
    await p.ready;
    await p.session.cancel(reason);
    // The next pairing must not start before this one's clean-up ended its record and lease.
    await p.done;
    return p.pairingId;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.local.keys()].map((id) => this.cancel(id, 'shutdown')));
  }

  /** A record is live while its replica is alive and still holds the device's lease. */
  private async isLive(deviceId: string, rec: PairingRecord): Promise<boolean> {
    const holder = await this.deps.leases.current(deviceId);
    return holder?.owner === rec.owner && (await this.deps.liveness.isAlive(rec.owner));
  }

  /**
   * Waits for the pairing's first QR / code (or its end) and answers it. 'replaced': the pairing
   * gave way to a newer one (forceNew) or vanished unlinked; the caller looks again.
   */
  private async join(
    req: ConnectRequest,
    pairingId: string,
    startedAt: number,
  ): Promise<ConnectionReply | 'replaced'> {
    const { redis } = this.deps;
    const until = Math.min(startedAt, Date.now()) + FIRST_CODE_TIMEOUT_MS + 2000;
    let nextLiveCheck = Date.now() + 1000;
    while (Date.now() < until) {
      const rec = await readPairing(redis, req.deviceId);
      if (rec?.pairingId !== pairingId) {
        return (await hasLinkedCredentials(redis, req.deviceId, this.deps.encryption))
          ? LINKED_CONNECTING
          : 'replaced';
      }
      if (rec.state === 'showing' && (rec.qr || rec.pairingCode)) return codeReply(req, rec);
      if (rec.state === 'paired') return LINKED_CONNECTING;
      if (rec.state === 'failed')
        return rec.reason === 'force_new' ? 'replaced' : pairingEndedReply(rec.reason ?? 'failed');
      if (Date.now() >= nextLiveCheck) {
        nextLiveCheck = Date.now() + 1000;
        // Its replica died before showing a code: look again (the lease runs out within its TTL).
        if (!(await this.isLive(req.deviceId, rec))) return 'replaced';
      }
      await sleep(POLL_MS);
    }
    return pairingEndedReply('no QR / pairing code from WhatsApp in time');
  }
}
