import { serializeError, type Logger } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { pollOptionHash, type InboundMessage, type MessageSender } from '@mgw/messenger';
import type { MessageKindStore } from '@mgw/store';

type Outcome = 'recorded' | 'duplicate' | 'unknown_poll' | 'undecryptable' | 'invalid' | 'error';

/**
 * Reactions and poll votes from contacts: not messages of their own, they update the record they
 * refer to (a reaction shows on its message's record; a vote counts in its poll's tally) and
 * become `message.reaction` and `poll.vote` events. Answers the other messages (recorded as
 * inbound messages: texts, media, locations, contact cards).
 */
export class InboundKinds {
  constructor(
    private readonly deps: {
      deviceId: string;
      kinds: MessageKindStore;
      sender: Pick<MessageSender, 'openPollVote'>;
      metrics: Metrics;
      logger: Logger;
    },
  ) {}

  async apply(received: InboundMessage[]): Promise<InboundMessage[]> {
    const rest: InboundMessage[] = [];
    for (const msg of received) {
      if (msg.reaction) await this.count('reaction', () => this.reaction(msg));
      else if (msg.pollVote) await this.count('poll_vote', () => this.vote(msg));
      else rest.push(msg);
    }
    return rest;
  }

  private async count(kind: 'reaction' | 'poll_vote', work: () => Promise<Outcome>): Promise<void> {
    let outcome: Outcome;
    try {
      outcome = await work();
    } catch (err) {
      outcome = 'error';
      this.deps.logger.warn('inbound message kind not applied', { kind, err: serializeError(err) });
    }
    this.deps.metrics.inboundKinds.inc({ kind, outcome });
  }

  private async reaction(msg: InboundMessage): Promise<Outcome> {
    const { targetPlatformMessageId, emoji } = msg.reaction!;
    const recorded = await this.deps.kinds.recordReaction(this.deps.deviceId, {
      targetPlatformMessageId,
      contact: msg.contact ?? { phone: msg.from },
      emoji,
      at: msg.receivedAt,
      platformMessageId: msg.platformMessageId,
    });
    return recorded ? 'recorded' : 'duplicate';
  }

  private async vote(msg: InboundMessage): Promise<Outcome> {
    const vote = msg.pollVote!;
    const poll = await this.deps.kinds.pollOf(this.deps.deviceId, vote.pollPlatformMessageId);
    if (!poll) return 'unknown_poll';
    const hashes = this.deps.sender.openPollVote(vote, poll.secret);
    if (!hashes) {
      this.deps.logger.warn('poll vote not decrypted', { messageId: poll.messageId });
      return 'undecryptable';
    }
    const chosen = new Set(hashes);
    const options = poll.poll.options.filter((o) => chosen.has(pollOptionHash(o)));
    // A single-choice poll takes one option: a vote for several is no vote a WhatsApp app makes.
    if (!poll.poll.multiple && options.length > 1) {
      this.deps.logger.warn('poll vote for several options of a single-choice poll', {
        messageId: poll.messageId,
      });
      return 'invalid';
    }
    const recorded = await this.deps.kinds.recordVote(this.deps.deviceId, poll.messageId, {
      contact: msg.contact ?? { phone: msg.from },
      options,
      at: msg.receivedAt,
      platformMessageId: msg.platformMessageId,
    });
    return recorded ? 'recorded' : 'duplicate';
  }
}
