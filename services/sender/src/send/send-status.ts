/**
 * A status update's audience at the moment it goes: its viewers as accepted, less those who opted
 * out of the device since (a status is a message to each of them). None left: the status fails.
 */
import { FAILURE_REASONS, type StatusContent, isLidAddress, phoneOfJid } from '@mgw/contracts';
import type { OutgoingMessage } from '@mgw/messenger';
import { PermanentSendError } from './send-errors.js';

export interface StatusDeps {
  /** Whether the contact (a phone or `<digits>@lid`) opted out of the device. */
  optedOut: (address: string) => Promise<boolean>;
}

/** The address the suppression list knows a viewer's JID by. */
const addressOf = (jid: string): string => (isLidAddress(jid) ? jid : (phoneOfJid(jid) ?? jid));

export async function statusToSend(
  status: StatusContent,
  deps: StatusDeps,
): Promise<NonNullable<OutgoingMessage['status']>> {
  const out = await Promise.all(status.audience.map((jid) => deps.optedOut(addressOf(jid))));
  const audience = status.audience.filter((_, i) => !out[i]);
  if (audience.length === 0)
    throw new PermanentSendError(FAILURE_REASONS.statusAudienceEmpty, 'every viewer of the status opted out');
  return {
    audience,
    ...(status.backgroundColor ? { backgroundColor: status.backgroundColor } : {}),
    ...(status.font !== undefined ? { font: status.font } : {}),
  };
}
