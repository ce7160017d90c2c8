import { expect } from 'chai';
import {
  FAILURE_REASONS,
  PRIORITY,
  createMetrics,
  renderOtp,
  seededMessageId,
  type Metrics,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import type { ExpireOutcome } from '@mgw/store';
import type { JobOutcome } from '../../clients/queue-events-pool.js';
import { AcceptUnanswered, type SendRequest } from '../../enqueue/job-writer.js';
import type { Refusal } from '../../enqueue/refusal.js';
import { MemoryMessages, MemoryRedis } from '../test-support.js';
import { EngineCache } from '../cloud-send/index.js';
import { sendOtp, type OtpDeps } from './send-otp.js';

/**
 * POST /otp's use case without an API: an acceptor that accepts the OTP and answers the wait as
 * the test says (sent, failed, timed out), the message records in memory.
 */
describe('sendOtp: an OTP jumps the queue and the API waits for it (an in-memory send pipeline)', () => {
  const deviceId = 'otp-1';
  const WAIT = 5000;
  let metrics: Metrics;
  let messages: MemoryMessages;
  let requests: SendRequest[];
  let removed: string[];
  /** What the first wait answers, what a wait for a started attempt answers, how the expiry goes. */
  let first: JobOutcome<SendJobResult> | Refusal | Error;
  let later: JobOutcome<SendJobResult>;
  let expiry: ExpireOutcome;
  let deps: OtpDeps;

  beforeEach(() => {
    metrics = createMetrics();
    messages = new MemoryMessages();
    requests = [];
    removed = [];
    expiry = 'expired';
    later = { kind: 'timeout' };
    deps = {
      metrics,
      messages: {
        get: (d, id) => messages.get(d, id),
        expireUnclaimed: async (job, error) => {
          if (expiry === 'expired') messages.failed(job.deviceId, job.messageId, error);
          return expiry;
        },
      },
      otpWaitTimeoutMs: WAIT,
      acceptor: {
        acceptAndWait: async (req) => {
          requests.push(req);
          if (first instanceof Error) throw first;
          if ('reason' in first && first.kind === 'refused') return first;
          const job: SendJobData = {
            kind: 'otp',
            messageId: req.messageIds?.[0] ?? 'otp-msg',
            platformMessageId: 'WA-OTP',
            deviceId,
            to: req.recipients[0]!,
            contentId: 'c-1',
            linkGeneration: 0,
            enqueuedAt: Date.now(),
          };
          messages.queued(job);
          return { kind: 'accepted', job, outcome: first as JobOutcome<SendJobResult> };
        },
        waitFor: async () => later,
        queue: () => ({ remove: async (id: string) => removed.push(id) }),
      },
      blocklist: { isBlocked: async () => false },
      // A linked device: it sends the text (a cloud device's template: features/otp/e2e).
      cloudSend: {
        redis: new MemoryRedis().client,
        engines: new EngineCache({ engineOf: async () => 'linked' }),
        cloudDevices: { get: async () => undefined },
        templates: { named: async () => [] },
        logger: { warn: () => undefined },
      },
    };
  });
  const body = { phone: '15550001111', code: '123456', language: 'English' } as Parameters<typeof sendOtp>[2];
  const sentAt = '2026-01-01T00:00:00.000Z';

  it('When the OTP is sent in time, then sent with WhatsApp’s id, the phone and when; it was asked at OTP priority with its expiry, the code rendered, the blocklist checked', async () => {
    first = {
      kind: 'completed',
      value: { messageId: 'otp-msg', platformMessageId: 'WA-1', phone: '15550001111', sentAt },
    };
    const before = Date.now();
    expect(await sendOtp(deps, deviceId, body)).to.deep.equal({
      kind: 'sent',
      messageId: 'otp-msg',
      platformMessageId: 'WA-1',
      phone: '15550001111',
      sentAt,
    });
    const [req] = requests;
    expect(req).to.deep.include({
      deviceId,
      kind: 'otp',
      recipients: ['15550001111'],
      priority: PRIORITY.otp,
      blocklistCheck: '15550001111',
    });
    expect(req!.content).to.deep.equal({
      text: renderOtp('123456', 'English'),
      otp: { language: 'English' },
    });
    // The wait from when it was asked: between the clock readings around the call (a 1 s margin
    // from now was one a loaded host could use up).
    expect(req!.expiresAt!).to.be.within(before + WAIT, Date.now() + WAIT);
    expect((await metrics.otpSent.get()).values.map((v) => [v.labels.language, v.value])).to.deep.equal([
      ['English', 1],
    ]);
  });

  it('When the send fails, then failed with its reason; a refusal comes back as it is, nothing waited for', async () => {
    first = { kind: 'failed', reason: 'not_on_whatsapp' };
    expect(await sendOtp(deps, deviceId, body)).to.deep.equal({
      kind: 'failed',
      messageId: 'otp-msg',
      reason: 'not_on_whatsapp',
    });
    first = { kind: 'refused', reason: 'recipient_blocked', recipient: '15550001111' };
    expect(await sendOtp(deps, deviceId, body)).to.deep.equal(first);
    expect((await metrics.otpSent.get()).values).to.deep.equal([]);
  });

  it('When time runs out before any attempt, then the OTP is expired (it never will be sent) and its job removed: timeout', async () => {
    first = { kind: 'timeout' };
    expect(await sendOtp(deps, deviceId, body)).to.deep.equal({ kind: 'timeout', messageId: 'otp-msg' });
    expect(removed).to.deep.equal(['otp-msg']);
    expect((await messages.get(deviceId, 'otp-msg'))?.error).to.equal(FAILURE_REASONS.otpExpired);
  });

  it('When time runs out while an attempt is under way, then that attempt is waited for: sent, failed, or uncertain when it outlives the grace', async () => {
    first = { kind: 'removed' };
    expiry = 'claimed';
    later = {
      kind: 'completed',
      value: { messageId: 'otp-msg', platformMessageId: 'WA-2', phone: '15550001111', sentAt },
    };
    expect(await sendOtp(deps, deviceId, body)).to.deep.include({ kind: 'sent', platformMessageId: 'WA-2' });
    later = { kind: 'failed', reason: 'send_failed' };
    expect(await sendOtp(deps, deviceId, body)).to.deep.include({ kind: 'failed', reason: 'send_failed' });
    later = { kind: 'timeout' };
    expect(await sendOtp(deps, deviceId, body)).to.deep.equal({ kind: 'uncertain', messageId: 'otp-msg' });
    expect(removed, 'a started attempt keeps its job').to.deep.equal([]);
  });

  it('When the OTP settled meanwhile (the expiry finds it final), then its record says how: sent (the job’s WhatsApp id) or failed', async () => {
    first = { kind: 'timeout' };
    expiry = 'final';
    const sentMeanwhile = sendOtp(deps, deviceId, body);
    const outcome = await sentMeanwhile;
    expect(outcome, 'no record moved on: uncertain').to.deep.equal({
      kind: 'uncertain',
      messageId: 'otp-msg',
    });

    deps.messages.get = async (d, id) => ({ ...(await messages.get(d, id))!, sentAt });
    expect(await sendOtp(deps, deviceId, body)).to.deep.equal({
      kind: 'sent',
      messageId: 'otp-msg',
      platformMessageId: 'WA-OTP',
      phone: '15550001111',
      sentAt,
    });
    deps.messages.get = async (d, id) => ({ ...(await messages.get(d, id))!, status: 'failed' });
    expect(await sendOtp(deps, deviceId, body)).to.deep.equal({
      kind: 'failed',
      messageId: 'otp-msg',
      reason: FAILURE_REASONS.sendFailed,
    });
  });

  it('When an Idempotency-Key seeds it, then its id is the key’s; an accept that got no answer is unknown with that id', async () => {
    first = { kind: 'timeout' };
    await sendOtp(deps, deviceId, body, 'seed-otp');
    expect(requests[0]).to.deep.include({ idempotent: true, messageIds: [seededMessageId('seed-otp', 0)] });
    first = new AcceptUnanswered(new Error('Redis went quiet'));
    expect(await sendOtp(deps, deviceId, body, 'seed-otp')).to.deep.equal({
      kind: 'unknown',
      messageId: seededMessageId('seed-otp', 0),
    });
  });
});
