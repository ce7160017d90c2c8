/**
 * "typing…" before a send (issue 29): the device shows the contact WhatsApp's `composing` chat
 * state for a time that grows with the text's length, then the message goes — closer to how a
 * person sends than a message out of nowhere. It fills the end of the pacing gap (pacing.ts) and
 * is cut short when the sender reaches the message late, so it never slows a batch down; no pacing (gap 0), no typing. Off for OTPs (a code is awaited),
 * edits and deletes, attachments without a caption, and devices whose policy says `typing: false`.
 */
import { isChannelJid, type MessageContent, type SendJobData } from '@mgw/contracts';
import type { Logger } from '@mgw/common';
import type { JobSender } from './send-engine.js';
import type { Lead, Pacer } from './pacing.js';

/** A person's pace: a base, then per character, up to a bound. */
export const TYPING_BASE_MS = 600;
export const TYPING_PER_CHAR_MS = 35;
export const TYPING_MAX_MS = 6000;
/**
 * Cut shorter than this by a late turn, no "typing…" is shown: the message would replace it about
 * as soon as it appears, and the presence update would cost a busy sender for nothing.
 */
export const TYPING_MIN_MS = 300;

/** How long "typing…" shows for a text of `chars` characters (bounded). */
export function typingMs(chars: number): number {
  return Math.min(TYPING_MAX_MS, TYPING_BASE_MS + TYPING_PER_CHAR_MS * chars);
}

/** The text a person would type for this message (undefined: nothing is typed). */
function typedText(data: SendJobData, content: MessageContent): string | undefined {
  // Nobody watches a status or a channel post being typed.
  if (data.kind === 'otp' || content.edit || content.delete || content.status || isChannelJid(data.to))
    return undefined;
  return content.attachment ? (content.attachment.caption ?? content.text) : content.text;
}

/**
 * The pacer's lead for this message: start "typing…" at the contact up to `ms` before the turn
 * (what is left of the gap when the sender reaches the message late), or undefined when the message types nothing or the device's policy has typing off. A failed
 * presence update is logged and never holds the message.
 */
export async function typingLead(
  data: SendJobData,
  content: MessageContent,
  jid: string,
  deps: { pacer: Pacer; sender: JobSender; logger: Logger },
): Promise<Lead | undefined> {
  const text = typedText(data, content);
  if (!text || !(await deps.pacer.typing())) return undefined;
  return {
    ms: typingMs(text.length),
    minMs: TYPING_MIN_MS,
    // A list's first message goes at once (its pace is its gaps); a message of its own is typed first.
    whenIdle: data.batchId === undefined,
    start: () => {
      deps.sender.presence(jid, 'composing').catch((err: unknown) =>
        deps.logger.debug('typing presence not sent', {
          err: err instanceof Error ? err.message : String(err),
        }),
      );
    },
  };
}
