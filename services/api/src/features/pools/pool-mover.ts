import { serializeError, type Logger } from '@mgw/common';
import { PRIORITY, keys, type SendJobData } from '@mgw/contracts';
import {
  FencedLeases,
  leaseKeysBeside,
  processOwnerId,
  publishEvent,
  type HeldLease,
  type PoolMove,
} from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import { controlDeviceBatch } from '../batches/index.js';
import { isRefusal } from '../../enqueue/refusal.js';
import { poolDevices, poolMembers, spread, type DropReason, type PoolDevice } from './pool-devices.js';

export interface PoolMoverOptions {
  /** How often the pools are looked at. */
  intervalMs: number;
  /** A device below this health score drops out of its pools' spread. */
  minHealth: number;
  /** Messages moved per batch and device in one round (the rest go in the next rounds). */
  perRound?: number;
}

type MoverDeps = Pick<
  ApiServices,
  | 'redis'
  | 'acceptor'
  | 'messages'
  | 'batches'
  | 'contents'
  | 'poolBatches'
  | 'poolMoves'
  | 'config'
  | 'metrics'
> & { logger: Logger };

/** A message to move: its job on the device it leaves, and where it goes. */
interface Carry {
  job: SendJobData;
  move: PoolMove;
}

/**
 * Moves the waiting messages of pooled batches off a device that dropped out of its pool (logged out,
 * time-locked or pushed back, at its daily cap, below the health floor) to the pool's other devices,
 * by what each may still send. Each move goes by `PoolMoves`' steps (journal, release on the device
 * it leaves, accept with the same messageId on the device it goes to, content released, journal
 * cleared), so a message is sent by one device once and a move a crash cut short is finished at the
 * next round. With no device left to take them, they wait where they are (held with their device's
 * reason). One API process moves a pool's messages at a time (a lease per pool).
 */
export class PoolMover {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;
  /** The pools' mover leases: the lease with fencing, one per pool, kept by its holder. */
  private readonly leases: FencedLeases;
  /** poolId -> the lease this process holds on it (as last taken or renewed). */
  private readonly held = new Map<string, HeldLease>();
  /** `<poolId>\n<deviceId>` -> why the device is out of its pool's spread (as last logged). */
  private readonly dropped = new Map<string, DropReason>();
  private readonly owner = processOwnerId('api');

  constructor(
    private readonly deps: MoverDeps,
    private readonly opts: PoolMoverOptions,
  ) {
    this.leases = new FencedLeases(deps.redis, {
      keys: (poolId) => leaseKeysBeside(keys.poolMoverLease(poolId)),
      form: 'token',
      // Several rounds: a holder that misses one or two keeps its pools; one that died loses them.
      ttlMs: Math.max(10_000, opts.intervalMs * 4),
    });
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.round()
        .catch((err: unknown) => {
          this.deps.logger.warn('pool mover round failed', { err: serializeError(err) });
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.opts.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, this.opts.intervalMs).unref();
  }

  /** Stops after the round under way and gives the pools' leases back, for another process to take now. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    const held = [...this.held.values()];
    this.held.clear();
    // Not given back (Redis away): they lapse after their TTL, as a dead process's do.
    await Promise.all(held.map((lease) => this.leases.release(lease).catch(() => false)));
  }

  /**
   * One look at every pool whose lease this process holds or takes (exported for tests: a round
   * run on demand). Returns the pools it looked at.
   */
  async round(): Promise<string[]> {
    const pools = await this.deps.redis.smembers(keys.poolIndex());
    // A pool deleted meanwhile: its lease lapses, and this process forgets it.
    for (const poolId of this.held.keys()) if (!pools.includes(poolId)) this.held.delete(poolId);
    const moved: string[] = [];
    for (const poolId of pools) {
      if (this.stopped) break;
      if (!(await this.holdLease(poolId))) continue;
      await this.movePool(poolId);
      moved.push(poolId);
    }
    return moved;
  }

  /**
   * The pool's mover lease: taken when free, renewed by its holder before each of its rounds (one
   * script: only while the lease is still its own), given back when the holder stops, lapsed after
   * its TTL when the holder died, so another API process takes over. Two movers at once (a lease
   * that lapsed under a slow round and was taken) stay safe: every step of a move is atomic or
   * repeatable, and the slow one's next renewal finds the lease lost.
   */
  private async holdLease(poolId: string): Promise<boolean> {
    const mine = this.held.get(poolId);
    if (mine) {
      // A Redis error is thrown: the round fails and is logged, as any of its commands would.
      const outcome = await this.leases.extend(mine);
      if (outcome === 'renewed') return true;
      this.held.delete(poolId);
      // Lost: another process holds it now. Missing: it lapsed (a slow round) and is free to take.
      if (outcome === 'lost') return false;
    }
    const taken = await this.leases.acquire(poolId, this.owner);
    if (taken) this.held.set(poolId, taken);
    return taken !== undefined;
  }

  private async movePool(poolId: string): Promise<void> {
    const { deps } = this;
    const members = await poolMembers(deps.redis, poolId);
    if (!members) return;
    const devices = await poolDevices(deps.redis, members, deps.config.sendPolicy, this.opts.minHealth);
    const takers = devices.filter((d) => !d.dropped);
    this.noteDrops(poolId, devices);
    // First the moves a crash cut short: their targets are fixed.
    const unfinished = await deps.poolMoves.unfinished(poolId);
    for (const move of unfinished) {
      const job = (await deps.acceptor.queue(move.from).getJob(move.messageId))?.data;
      if (!job) {
        await deps.poolMoves.finish(poolId, move.messageId);
        continue;
      }
      await this.carry(poolId, move.batchId, move.reason, [{ job, move }]);
    }
    if (takers.length === 0) return;
    const dropped = devices.filter((d): d is PoolDevice & { dropped: DropReason } => d.dropped !== undefined);
    if (dropped.length === 0) return;
    for (const batchId of await deps.poolBatches.openBatches(poolId)) {
      const batch = await deps.poolBatches.get(poolId, batchId);
      if (!batch || batch.state === 'cancelled' || batch.state === 'completed') {
        await deps.poolBatches.close(poolId, batchId);
        continue;
      }
      // A paused batch's messages wait where they are: they move once it is resumed.
      if (batch.state === 'paused') continue;
      for (const from of dropped) await this.moveShare(poolId, batchId, from, takers);
    }
  }

  /** Logs each device's drop out of (and return to) the pool's spread, once per change. */
  private noteDrops(poolId: string, devices: PoolDevice[]): void {
    for (const d of devices) {
      const key = `${poolId}\n${d.deviceId}`;
      const was = this.dropped.get(key);
      if (was === d.dropped) continue;
      if (d.dropped) this.dropped.set(key, d.dropped);
      else this.dropped.delete(key);
      if (d.dropped || was)
        this.deps.logger.info(d.dropped ? 'pool device dropped out' : 'pool device back in the spread', {
          poolId,
          deviceId: d.deviceId,
          ...(d.dropped ? { reason: d.dropped } : {}),
          health: d.health,
        });
    }
  }

  /** Moves what `from` holds of the batch and may still give up, a page at a time. */
  private async moveShare(
    poolId: string,
    batchId: string,
    from: PoolDevice & { dropped: DropReason },
    takers: PoolDevice[],
  ): Promise<void> {
    const { deps } = this;
    const perRound = this.opts.perRound ?? 2000;
    const given = new Map<string, number>();
    for (let moved = 0; moved < perRound;) {
      const ids = await deps.poolBatches.share(poolId, batchId, from.deviceId, 200);
      if (ids.length === 0) return;
      const queue = deps.acceptor.queue(from.deviceId);
      const jobs = await Promise.all(ids.map((id) => queue.getJob(id)));
      const gone = ids.filter((_, i) => !jobs[i]);
      // No job: it ended (sent or failed, the job removed): the device keeps it.
      await deps.poolBatches.forget(poolId, batchId, from.deviceId, gone);
      const waiting = jobs.flatMap((j) => (j ? [j.data] : []));
      if (waiting.length === 0) continue;
      const targets = spread(takers, given, waiting.length);
      const carries: Carry[] = [];
      for (const [i, job] of waiting.entries()) {
        const to = targets[i]!;
        given.set(to, (given.get(to) ?? 0) + 1);
        const move = await deps.poolMoves.begin(poolId, {
          messageId: job.messageId,
          from: from.deviceId,
          to,
          batchId,
          reason: from.dropped,
        });
        carries.push({ job, move });
      }
      const carried = await this.carry(poolId, batchId, from.dropped, carries);
      // None moved (the device they go to refused them: its queue is full, say): the journal
      // keeps them, and the next round tries again, rather than this one spinning on them.
      if (carried === 0 && gone.length === 0) return;
      moved += carried;
    }
  }

  /**
   * Steps 2–4 of each move (see PoolMoves): released on the device it leaves (or kept there when
   * its send began, or left for the next round while an attempt is under way there), accepted with its id on the device it goes to, its content let go, its journal
   * entry cleared. Returns how many moved.
   */
  private async carry(poolId: string, batchId: string, reason: string, carries: Carry[]): Promise<number> {
    const { deps } = this;
    const released: Carry[] = [];
    const contentOf = new Map<string, Promise<boolean>>();
    for (const c of carries) {
      // Its content gone (the batch waited past the retention), it could be sent nowhere: it stays
      // on its device, which ends it (content gone, or logged out) as it would any other.
      const key = `${c.job.deviceId}\n${c.job.contentId}`;
      if (!contentOf.has(key)) contentOf.set(key, deps.contents.exists(c.job.deviceId, c.job.contentId));
      const outcome = (await contentOf.get(key)) ? await deps.poolMoves.release(c.job, c.move.to) : 'taken';
      if (outcome === 'released') released.push(c);
      else {
        // Taken: its device keeps it for good. Busy: an attempt is under way there and may end
        // before the socket (the message is then movable again), so it stays in the device's
        // share for the next round to ask again; only this round's journal entry goes.
        if (outcome === 'taken')
          await deps.poolBatches.forget(poolId, batchId, c.job.deviceId, [c.job.messageId]);
        await deps.poolMoves.finish(poolId, c.job.messageId);
      }
    }
    // One accept per device it goes to and content (a batch's messages share one content).
    const groups = new Map<string, Carry[]>();
    for (const c of released) {
      const k = `${c.move.to}\n${c.job.deviceId}\n${c.job.contentId}`;
      groups.set(k, [...(groups.get(k) ?? []), c]);
    }
    let moved = 0;
    for (const group of groups.values()) moved += await this.accept(poolId, batchId, reason, group);
    return moved;
  }

  /**
   * Moves whose target `gone` no longer takes messages go to the pool's devices that do (by what
   * each may still send); the next round carries them there. None left: they wait on the journal.
   */
  private async retarget(poolId: string, gone: string, carries: Carry[]): Promise<void> {
    const { deps } = this;
    const members = await poolMembers(deps.redis, poolId);
    if (!members) return;
    const devices = await poolDevices(deps.redis, members, deps.config.sendPolicy, this.opts.minHealth);
    const takers = devices.filter((d) => !d.dropped && d.deviceId !== gone);
    if (takers.length === 0) return;
    const targets = spread(takers, new Map(), carries.length);
    let moved = 0;
    for (const [i, c] of carries.entries())
      if (await deps.poolMoves.retarget(poolId, c.job.messageId, gone, targets[i]!)) moved++;
    if (moved > 0)
      deps.logger.info('pooled messages pointed at another device: the one they moved to is gone', {
        poolId,
        gone,
        count: moved,
      });
  }

  private async accept(poolId: string, batchId: string, reason: string, group: Carry[]): Promise<number> {
    const { deps } = this;
    const { job: first, move } = group[0]!;
    const from = first.deviceId;
    const to = move.to;
    // Already there (a repeat after a crash): only the steps after the accept are left.
    const there = await Promise.all(group.map((c) => deps.acceptor.queue(to).getJob(c.job.messageId)));
    const missing = group.filter((_, i) => !there[i]);
    if (missing.length > 0) {
      const stored = await deps.contents.get(from, first.contentId);
      if (!stored) {
        deps.logger.error('pooled messages could not move: their content is gone', { poolId, batchId, from });
        return 0;
      }
      const media = stored.content.attachment ? await deps.contents.media(from, first.contentId) : undefined;
      const vars = stored.content.personalised
        ? await Promise.all(missing.map((c) => deps.contents.vars(from, first.contentId, c.job.messageId)))
        : undefined;
      const outcome = await deps.acceptor.accept({
        deviceId: to,
        kind: 'send',
        recipients: missing.map((c) => c.job.to),
        messageIds: missing.map((c) => c.job.messageId),
        content: stored.content,
        ...(media ? { media } : {}),
        ...(vars ? { vars: vars.map((v) => v ?? {}) } : {}),
        ...(first.sendAt !== undefined ? { sendAt: first.sendAt } : {}),
        batchId,
        poolId,
        priority: PRIORITY.send,
        moved: true,
      });
      // Refused: the journal keeps the moves (they wait released, sent by none yet). Its queue
      // full, the next round finishes them there; the device gone (logged out since the move
      // began), they are pointed at a device of the pool that still takes messages.
      if (isRefusal(outcome)) {
        deps.logger.warn('pooled messages not accepted by the device they move to', {
          poolId,
          batchId,
          to,
          reason: outcome.reason,
        });
        if (outcome.reason === 'no_device') await this.retarget(poolId, to, missing);
        return 0;
      }
    }
    const queue = deps.acceptor.queue(from);
    for (const c of group) {
      await deps.poolMoves.releaseContent(c.job);
      await queue.remove(c.job.messageId).catch(() => 0);
    }
    await deps.poolBatches.moved(
      poolId,
      batchId,
      from,
      to,
      group.map((c) => ({ messageId: c.job.messageId, recipient: c.job.to })),
    );
    // A pause or cancel of the whole batch that came meanwhile reaches the new part too.
    const meta = await deps.poolBatches.meta(poolId, batchId);
    if (meta?.cancelledAt) await controlDeviceBatch(deps, to, batchId, 'cancel', deps.logger);
    else if (meta?.pausedAt) await controlDeviceBatch(deps, to, batchId, 'pause', deps.logger);
    for (const c of group) await deps.poolMoves.finish(poolId, c.job.messageId);
    deps.metrics.poolMoves.inc({ pool: poolId, from, reason }, group.length);
    const data = {
      poolId,
      batchId,
      from,
      to,
      reason,
      count: group.length,
      messageIds: group.map((c) => c.job.messageId),
    };
    await Promise.all([from, to].map((d) => publishEvent(deps.redis, d, 'batch.recipients_moved', data)));
    deps.logger.info('pooled messages moved', { poolId, batchId, from, to, reason, count: group.length });
    return group.length;
  }
}
