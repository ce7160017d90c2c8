import type { WACallEvent } from '@whiskeysockets/baileys';
import type { ContactIdentity } from '@mgw/contracts';
import { identityOfJids } from './inbound-message.js';
import type { WASocket } from './socket.js';

/** What happened to a call, as the gateway follows it (Baileys' other states are the call's plumbing). */
export type CallStatus = 'offer' | 'accept' | 'reject' | 'timeout' | 'terminate';
const FOLLOWED = new Set<string>(['offer', 'accept', 'reject', 'timeout', 'terminate']);

/** One step of an incoming call. */
export interface CallUpdate {
  callId: string;
  status: CallStatus;
  /** The caller's phone and/or LID. */
  caller: ContactIdentity;
  /** The caller's JID as WhatsApp named it: a reject is addressed to it. */
  callerJid: string;
  /** Known on the offer (and on later steps of an offer this socket saw). */
  video?: boolean;
  group?: boolean;
  groupId?: string;
  at: Date;
}

/** The steps of incoming calls among Baileys' call events (the offer's details kept on each). */
export function callUpdatesOf(events: readonly WACallEvent[]): CallUpdate[] {
  const out: CallUpdate[] = [];
  for (const e of events) {
    if (!FOLLOWED.has(e.status) || !e.id || !e.from) continue;
    out.push({
      callId: e.id,
      status: e.status as CallStatus,
      caller: identityOfJids(e.from, e.callerPn),
      callerJid: e.from,
      ...(e.isVideo !== undefined ? { video: !!e.isVideo } : {}),
      ...(e.isGroup !== undefined ? { group: !!e.isGroup } : {}),
      ...(e.groupJid ? { groupId: e.groupJid } : {}),
      at: e.date instanceof Date && !Number.isNaN(e.date.getTime()) ? e.date : new Date(),
    });
  }
  return out;
}

/**
 * Rejects a call (the caller's phone stops ringing); resolves once WhatsApp acknowledged it.
 * Without the caller's privacy token: whatsmeow 592721a0 took back the `<tctoken>` that 00ce57f2
 * had added to the reject (with it the call kept ringing, whatsmeow issue #1182); privacy-tokens.ts.
 */
export async function rejectCall(
  sock: WASocket,
  update: Pick<CallUpdate, 'callId' | 'callerJid'>,
): Promise<void> {
  await sock.rejectCall(update.callId, update.callerJid);
}
