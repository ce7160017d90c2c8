import { keys } from '@mgw/contracts';
import type {
  InboundRecord,
  MediaStore,
  MessageKindStore,
  MessageRevisions,
  PoolBatchStore,
} from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import type { RecordReads } from './records.js';
import { withContacts } from './record-contacts.js';
import { withRevisions } from './revised-record.js';
import { MAX_ID_LENGTH, ownRecordAndFields } from './own-message.js';

/** What GET /messages/:id reads: the record and what is shown beside it. */
export type MessageDeps = RecordReads &
  Pick<ApiServices, 'redis'> & {
    media: Pick<MediaStore, 'show'>;
    revisions: Pick<MessageRevisions, 'view'>;
    kinds: Pick<MessageKindStore, 'read'>;
    poolBatches: Pick<PoolBatchStore, 'owner'>;
  };

/** Whose message is asked for: the token's device, or a pool's (through a pool token). */
export interface MessageAsker {
  deviceId: string;
  poolId?: string;
}

/**
 * Message `id` as GET /messages/:id shows it: its record with its contact, its edits and deletes,
 * its kind (reaction, location, poll…) and, for an inbound attachment kept in the media store, a
 * URL signed now. Undefined for an id that is no message of the device, so the route says 404
 * and never whose it is. Through a pool: the device that holds the message now (a moved one:
 * where it went). An OTP the device's pool sent through its Cloud API device (`otpFallback`):
 * that device's record, which is where it lives.
 */
export async function getMessage(
  s: MessageDeps,
  asker: MessageAsker,
  id: string,
): Promise<Record<string, unknown> | undefined> {
  let deviceId = asker.poolId
    ? ((await s.poolBatches.owner(asker.poolId, id)) ?? asker.deviceId)
    : asker.deviceId;
  let own = await ownRecordAndFields(s, deviceId, id);
  if (!own && !asker.poolId) {
    // Read only for an id the device has no record of (a 404 otherwise): one GET.
    const via = id.length <= MAX_ID_LENGTH ? await s.redis.get(keys.otpSentVia(deviceId, id)) : null;
    if (via) own = await ownRecordAndFields(s, (deviceId = via), id);
  }
  if (!own) return undefined;
  const { record: data, fields } = own;
  if ('attachment' in data && data.direction === 'inbound') await withMediaUrl(s, deviceId, data);
  await withContacts(s.redis, deviceId, [data as unknown as Record<string, unknown>]);
  return {
    ...(await withRevisions(s, deviceId, data, fields)),
    ...(await s.kinds.read(deviceId, id, fields)),
  };
}

/**
 * An inbound attachment kept in the media store: a pre-signed URL signed now (its lifetime from
 * now, never past the object's retention). Once the object is gone its id is dropped too.
 */
async function withMediaUrl(s: Pick<MessageDeps, 'media'>, deviceId: string, record: InboundRecord) {
  const att = record.attachment;
  if (!att?.mediaId) return;
  const shown = await s.media.show(deviceId, att.mediaId);
  if (!shown) {
    delete att.mediaId;
    return;
  }
  if (shown.url) Object.assign(att, { url: shown.url, urlExpiresAt: shown.urlExpiresAt });
}
