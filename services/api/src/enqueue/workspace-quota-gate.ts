import { utcDay, type WorkspaceQuotaCounts, type WorkspaceRecord } from '@mgw/store';
import type { Refusal } from './refusal.js';

/** What the gate reads: who owns a device and its workspace's record (cached), its devices, its counts. */
export interface WorkspaceQuotaGateDeps {
  ownerOf(deviceId: string): Promise<string>;
  workspace(id: string): Promise<WorkspaceRecord | undefined>;
  devicesOf(workspaceId: string): Promise<string[]>;
  counts: Pick<WorkspaceQuotaCounts, 'reserveDay' | 'giveBackDay' | 'queued' | 'mediaBytes'>;
}

/** Room held in a workspace's daily count for a request: what the accept call refused goes back. */
export interface DayReservation {
  giveBack(messages: number): Promise<void>;
}

/**
 * A workspace's send quotas (docs/workspaces.md "Quotas"), judged before a request's accept call:
 * - `queuedMessages`: what its devices hold queued, summed when the request arrives, plus the
 *   request, must fit (requests accepted at the same instant on several of its devices may pass it
 *   together: the bound is the requests in flight);
 * - `messagesPerDay`: the request is reserved whole in the day's count, atomically, or refused
 *   whole; what the accept call then refuses is given back. The day's count starts from what its
 *   devices accepted that day (their usage, counted by the accept call whether or not there is a
 *   quota), so a quota set mid-day counts what was sent before it.
 * A workspace without either quota (every install's `default` unless the operator sets one) costs
 * two cached lookups and no Redis round trip.
 */
export class WorkspaceQuotaGate {
  constructor(private readonly deps: WorkspaceQuotaGateDeps) {}

  async admit(
    deviceId: string,
    messages: number,
    now = Date.now(),
  ): Promise<Refusal | DayReservation | undefined> {
    const workspaceId = await this.deps.ownerOf(deviceId);
    const quotas = (await this.deps.workspace(workspaceId))?.quotas;
    if (quotas?.queuedMessages === undefined && quotas?.messagesPerDay === undefined) return undefined;
    const { counts } = this.deps;
    if (quotas.queuedMessages !== undefined) {
      const queued = await counts.queued(await this.deps.devicesOf(workspaceId));
      if (queued + messages > quotas.queuedMessages)
        return {
          kind: 'refused',
          reason: 'workspace_quota',
          quota: 'queuedMessages',
          limit: quotas.queuedMessages,
          resetsAt: null,
        };
    }
    if (quotas.messagesPerDay === undefined) return undefined;
    const reserved = await counts.reserveDay(
      workspaceId,
      messages,
      quotas.messagesPerDay,
      () => this.deps.devicesOf(workspaceId),
      now,
    );
    if (!reserved.reserved)
      return {
        kind: 'refused',
        reason: 'workspace_quota',
        quota: 'messagesPerDay',
        limit: quotas.messagesPerDay,
        resetsAt: utcDay(now).resetsAt,
      };
    return { giveBack: (n) => counts.giveBackDay(workspaceId, reserved.day, n) };
  }

  /**
   * The `mediaBytes` quota, before an upload of `bytes` is stored: what its devices keep (summed
   * when the upload arrives: uploads at the same instant may pass it together) plus the upload.
   */
  async admitMedia(deviceId: string, bytes: number): Promise<Refusal | undefined> {
    const workspaceId = await this.deps.ownerOf(deviceId);
    const limit = (await this.deps.workspace(workspaceId))?.quotas.mediaBytes;
    if (limit === undefined) return undefined;
    const stored = await this.deps.counts.mediaBytes(await this.deps.devicesOf(workspaceId));
    if (stored + bytes <= limit) return undefined;
    return { kind: 'refused', reason: 'workspace_quota', quota: 'mediaBytes', limit, resetsAt: null };
  }
}
