import type { RedisClient } from '@mgw/common';
import { randomUUID } from 'node:crypto';
import { ERRORS, type ConnectionReply } from '@mgw/contracts';
import { claimDisconnect, finishDisconnect, readDisconnectMarker } from '@mgw/store';
import type { Liveness } from './liveness.js';

interface Marker {
  id: string;
  owner: string;
  state: 'running' | 'done';
  reply?: ConnectionReply;
}

/** Joiners that arrive shortly after the end still read the outcome. */
const DONE_TTL_MS = 15_000;
const POLL_MS = 150;

/**
 * One /disconnect per device at a time, across replicas: the first claims `keys.disconnecting`,
 * the next ones wait for its outcome and answer the same (they take no Baileys socket, no lease,
 * no owner round trip of their own). A /connect meanwhile answers 409 (`inProgress`). A marker
 * whose process died (not alive any more) is taken over at once.
 */
export class DisconnectCoordinator {
  constructor(
    private readonly redis: RedisClient,
    private readonly liveness: Liveness,
    /** How long a disconnect may run: the API's wait plus a margin. */
    private readonly runningTtlMs: number,
  ) {}

  async run(deviceId: string, work: () => Promise<ConnectionReply>): Promise<ConnectionReply> {
    const id = randomUUID();
    const mine: Marker = { id, owner: this.liveness.owner, state: 'running' };
    const deadline = Date.now() + this.runningTtlMs;
    let takeover = '';
    while (Date.now() < deadline) {
      const other = await claimDisconnect(
        this.redis,
        deviceId,
        JSON.stringify(mine),
        this.runningTtlMs,
        takeover,
      );
      if (!other) return this.runOwn(deviceId, mine, work);
      const joined = JSON.parse(other) as Marker;
      const outcome = await this.waitFor(deviceId, joined, deadline);
      if ('reply' in outcome) return outcome.reply;
      takeover = outcome.dead ? joined.id : '';
    }
    return { success: false, error: ERRORS.logoutIncomplete, httpStatus: 503 };
  }

  /** Whether a disconnect of the device runs now (on a live process). */
  async inProgress(deviceId: string): Promise<boolean> {
    const raw = await readDisconnectMarker(this.redis, deviceId);
    if (!raw) return false;
    const m = JSON.parse(raw) as Marker;
    return m.state === 'running' && (await this.liveness.isAlive(m.owner));
  }

  private async runOwn(
    deviceId: string,
    mine: Marker,
    work: () => Promise<ConnectionReply>,
  ): Promise<ConnectionReply> {
    let reply: ConnectionReply = { success: false, error: ERRORS.connectionFailed, httpStatus: 502 };
    try {
      reply = await work();
      return reply;
    } finally {
      const done: Marker = { ...mine, state: 'done', reply };
      await finishDisconnect(this.redis, deviceId, mine.id, JSON.stringify(done), DONE_TTL_MS).catch(
        () => undefined,
      );
    }
  }

  private async waitFor(
    deviceId: string,
    joined: Marker,
    deadline: number,
  ): Promise<{ reply: ConnectionReply } | { dead: boolean }> {
    // Checked on the first look (a marker left by a dead process is taken over at once), then each second.
    let nextLivenessCheck = Date.now();
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const raw = await readDisconnectMarker(this.redis, deviceId);
      if (!raw) return { dead: false };
      const m = JSON.parse(raw) as Marker;
      if (m.id !== joined.id) return { dead: false };
      if (m.state === 'done' && m.reply) return { reply: m.reply };
      if (Date.now() >= nextLivenessCheck) {
        nextLivenessCheck = Date.now() + 1000;
        if (!(await this.liveness.isAlive(m.owner))) return { dead: true };
      }
    }
    return { dead: false };
  }
}
