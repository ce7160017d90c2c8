import type { RedisClient } from '@mgw/common';
import type { ContactIdentity } from '@mgw/contracts';
import { ContactIdentities } from '@mgw/store';

/**
 * Puts `contact: { phone?, lid? }` on messages as GET /messages and GET /messages/:id show them:
 * an outbound message's recipient (its `to`, a phone or a LID) and an inbound message's writer,
 * each completed from the device's phone <-> LID map (one round trip for the whole page).
 */
export async function withContacts(
  redis: RedisClient,
  deviceId: string,
  records: Record<string, unknown>[],
): Promise<void> {
  const addresses = records.map((r) => {
    const contact = r.contact as ContactIdentity | undefined;
    return contact ? (contact.lid ?? contact.phone ?? '') : typeof r.to === 'string' ? r.to : '';
  });
  if (records.length === 0) return;
  const known = await new ContactIdentities(redis).resolveMany(deviceId, addresses);
  records.forEach((r, i) => {
    const contact = { ...known[i], ...(r.contact as ContactIdentity | undefined) };
    if (contact.phone || contact.lid) r.contact = contact;
  });
}
