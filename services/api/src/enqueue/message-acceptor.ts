import {
  inSpan,
  messageTrace,
  NOT_SAMPLED,
  sampledUnder,
  takeAcceptSpan,
  traceContext,
  tracer,
  tracingOn,
  type Span,
} from '@mgw/common';
import type { SendJobData, SendJobResult } from '@mgw/contracts';
import type { SendQueue } from '@mgw/store';
import { waitForJob, type JobOutcome, type QueueEventsPool } from '../clients/queue-events-pool.js';
import { GroupCommit } from './group-commit.js';
import {
  AcceptUnanswered,
  JobWriter,
  type AcceptDeps,
  type Accepted,
  type SendRequest,
} from './job-writer.js';
import { BatchInPieces } from './batch-in-pieces.js';
import { isRefusal, type Refusal } from './refusal.js';
import type { WorkspaceQuotaGate } from './workspace-quota-gate.js';

export interface MessageAcceptorOptions extends AcceptDeps {
  /** Recipients per accept call: larger batches are accepted in pieces of this size (default 500). */
  chunkRecipients?: number;
  events: QueueEventsPool;
  /** The device's workspace's send quotas (none: not judged, as in the store's own tests). */
  workspaceQuotas?: Pick<WorkspaceQuotaGate, 'admit'>;
}

const DEFAULT_CHUNK_RECIPIENTS = 500;
const api = tracer('api');

/**
 * Accepts messages: the producer side of the per-device send queues. A request is accepted by one
 * call of the accept script (`accept-script.ts`), atomic: a single recipient looked for on the
 * account's blocklist, the device's state checked (it takes messages, its link generation is the
 * one the jobs carry, its quota has room), the request's rate-limit hit counted, its content
 * stored once, the quota counted, one job per recipient (jobId = messageId; a queued message has
 * no other record).
 *
 * Requests for one device that arrive while its previous call is in flight share the next one
 * (`GroupCommit`). A batch longer than `chunkRecipients` is accepted in pieces, one call each, held
 * unsent until its last piece commits (`BatchInPieces`).
 */
export class MessageAcceptor {
  private readonly writer: JobWriter;
  private readonly chunkRecipients: number;
  private readonly groupCommit: GroupCommit;
  private readonly batchInPieces: BatchInPieces;

  constructor(private readonly deps: MessageAcceptorOptions) {
    this.chunkRecipients = deps.chunkRecipients ?? DEFAULT_CHUNK_RECIPIENTS;
    this.writer = new JobWriter(deps);
    this.groupCommit = new GroupCommit(deps, this.writer, this.chunkRecipients);
    this.batchInPieces = new BatchInPieces(deps, this.writer, this.chunkRecipients);
  }

  /** The device's send queue (BullMQ), opened once. */
  queue(deviceId: string): SendQueue {
    return this.writer.queue(deviceId);
  }

  /**
   * Accepts a request's messages: their jobs, or why the request was refused (no device, quota,
   * rate limit). Rejects when storage failed (unreachable, out of memory): nothing was accepted.
   */
  async accept(req: SendRequest): Promise<Accepted | Refusal> {
    const gate = this.deps.workspaceQuotas;
    // A pool's move was judged when first accepted.
    const held = gate && !req.moved ? await gate.admit(req.deviceId, req.recipients.length) : undefined;
    if (held && isRefusal(held)) return held;
    if (!held) return this.acceptTraced(req);
    let outcome: Accepted | Refusal;
    try {
      outcome = await this.acceptTraced(req);
    } catch (err) {
      // Nothing written, or not known (the reply was lost): the day's count keeps it unless it
      // surely was not (a refusal of storage as a whole is thrown as itself, not as unanswered).
      if (!(err instanceof AcceptUnanswered)) await held.giveBack(req.recipients.length);
      throw err;
    }
    if (isRefusal(outcome)) await held.giveBack(req.recipients.length);
    return outcome;
  }

  private acceptTraced(req: SendRequest): Promise<Accepted | Refusal> {
    if (!tracingOn()) return this.acceptNow(req);
    // The accept's span: its context goes into every job (requests share calls, so it is carried
    // by the request rather than by the call's own context). A request's first accept is recorded
    // on the request's own span; any other (a second one, a pool's move) gets `message.accept`.
    const request = takeAcceptSpan();
    if (request) return this.acceptIn(request, req);
    // Under a trace not sampled (a request's ratio miss, a trusted caller's choice): nothing to
    // record, only the decision to hand on in every job, as the plain flag (`NOT_SAMPLED`).
    if (sampledUnder(traceContext.active()) === false)
      return this.acceptNow({ ...req, traceparent: NOT_SAMPLED });
    return inSpan(api, 'message.accept', {}, (span) => this.acceptIn(span, req));
  }

  private async acceptIn(span: Span, req: SendRequest): Promise<Accepted | Refusal> {
    span.setAttributes({
      'mgw.device': req.deviceId,
      'mgw.recipients': req.recipients.length,
      'mgw.kind': req.kind,
    });
    const outcome = await this.acceptNow({ ...req, traceparent: messageTrace() });
    span.setAttribute('mgw.outcome', isRefusal(outcome) ? outcome.reason : 'accepted');
    return outcome;
  }

  private acceptNow(req: SendRequest): Promise<Accepted | Refusal> {
    if (req.recipients.length > this.chunkRecipients) return this.batchInPieces.accept(req);
    return this.groupCommit.accept(req);
  }

  /** Accepts one message and waits (bounded) for its result; used by OTP. */
  acceptAndWait(
    req: SendRequest,
    timeoutMs: number,
  ): Promise<{ kind: 'accepted'; job: SendJobData; outcome: JobOutcome<SendJobResult> } | Refusal> {
    const queue = this.queue(req.deviceId);
    return this.deps.events.use(queue, async (events) => {
      const accepted = await this.accept(req);
      if (isRefusal(accepted)) return accepted;
      const job = accepted.jobs[0]!;
      return { kind: 'accepted', job, outcome: await this.waitFor(job, timeoutMs, events) };
    });
  }

  /** Waits (bounded) for a job already accepted. */
  async waitFor(
    job: SendJobData,
    timeoutMs: number,
    events?: Parameters<typeof waitForJob>[2],
  ): Promise<JobOutcome<SendJobResult>> {
    const queue = this.queue(job.deviceId);
    const added = await queue.getJob(job.messageId);
    if (!added) return { kind: 'timeout' };
    if (events) return waitForJob<SendJobResult>(queue, added, events, timeoutMs);
    return this.deps.events.use(queue, (ev) => waitForJob<SendJobResult>(queue, added, ev, timeoutMs));
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}
