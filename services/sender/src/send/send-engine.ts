/**
 * What the send path (processSendJob) needs of a device's engine, and nothing more: a linked
 * device's Baileys socket and MessageSender fit it, and so does a cloud device's Graph API sender
 * (cloud/cloud-sender.ts). The engine's own rules before the claim are `SendEngine`'s.
 */
import type { Job } from 'bullmq';
import type {
  DeviceEngine,
  HeldReason,
  MessageContent,
  SendJobData,
  SendJobResult,
  TemplateInput,
} from '@mgw/contracts';
import type { DeviceSocket, MessageSender, OutgoingMessage, SendAttempt } from '@mgw/messenger';

/**
 * A message as an engine puts it out: a template only on an engine that sends templates;
 * `previewWanted`: the request wants a text's link preview (an engine whose platform renders the
 * preview itself reads this instead of `linkPreview`, which the gateway fetched).
 */
export type EngineMessage = OutgoingMessage & { template?: TemplateInput; previewWanted?: boolean };

/**
 * One send attempt (SendAttempt: whether it may have reached the platform), and the id the
 * platform gave the message when the engine does not send it under the id fixed at enqueue time
 * (the Cloud API answers its own `wamid.…`): the record and the job's result take that one.
 */
export type EngineAttempt = SendAttempt & {
  platformMessageId?: string;
  /** Our id of the message the attempt sends (the Cloud API echoes it in the message's statuses). */
  messageId?: string;
};

/** What the send path uses of the device's sender. */
export interface JobSender extends Pick<
  MessageSender,
  'lookup' | 'known' | 'prefetchKeys' | 'presence' | 'sentText'
> {
  send(msg: EngineMessage, attempt?: EngineAttempt): Promise<void>;
  /** Whether it sends `template` messages (a cloud device's); a linked device's does not. */
  readonly sendsTemplates?: boolean;
}

/** What the send path uses of the device's connection. */
export interface JobConnection {
  /** Whether the device can send within `ms` (a linked device's socket opens; a cloud device is connected). */
  waitForOpen(ms: number): Promise<boolean>;
  groups: Pick<DeviceSocket['groups'], 'assertMaySend'>;
  /**
   * A device that is down until someone acts (a cloud device whose token failed): its messages
   * are held with this reason, until then, instead of spending an attempt each. Undefined: the
   * attempt fails as not connected and is retried.
   */
  downHold?(): { reason: HeldReason; until: number } | undefined;
}

/** The device's engine rules around the claim (a cloud device's: cloud/cloud-rules.ts). */
export interface SendEngine {
  /** Its name, kept on the records it attempts (`engine`). */
  readonly name: DeviceEngine;
  /**
   * The engine has no idempotency key: a message an earlier attempt may have handed to it is never
   * written again; its claim is refused and it fails `send_outcome_unknown` (MessageStore.claim `once`).
   */
  readonly once: boolean;
  /** Why the engine can never send to this address (undefined: it can). */
  unreachable(to: string): string | undefined;
  /**
   * Right before the claim (after the device's turn): refuses what the engine's platform would
   * refuse (PermanentSendError), holds what must wait (holdMessage), waits for the engine's rate.
   */
  beforeClaim(
    job: Job<SendJobData, SendJobResult>,
    content: MessageContent,
    token: string | undefined,
  ): Promise<void>;
}

/** A failed send that waits (held, no attempt spent) instead of failing: the device is down. */
export class HoldError extends Error {
  override name = 'HoldError';
  constructor(
    readonly held: HeldReason,
    readonly until: number,
    message: string,
  ) {
    super(message);
  }
}
