import { randomUUID } from 'node:crypto';
import { GraphError, GraphUnreachableError, MediaTooLargeError, type GraphClient } from '@mgw/cloud';
import { serializeError } from '@mgw/common';
import type { InboundKeepError, Metrics } from '@mgw/contracts';
import {
  isQuotaRefusal,
  type CloudDeviceStore,
  type InboundInput,
  type MediaSettingsStore,
  type MediaStore,
} from '@mgw/store';

/** What keeping a cloud attachment on arrival needs. */
export interface KeepMediaDeps {
  media: Pick<MediaStore, 'kind' | 'put' | 'show'>;
  settings: Pick<MediaSettingsStore, 'get'>;
  devices: Pick<CloudDeviceStore, 'get'>;
  graph: Pick<GraphClient, 'downloadMedia'>;
  /** Whether the device recorded the message before (Meta redelivers): its file is not stored twice. */
  recorded(deviceId: string, wamid: string): Promise<boolean>;
  metrics: Pick<Metrics, 'mediaInboundKept'>;
  /** The API's logger (its `warn`): why a file was not kept, never the file. */
  logger: { warn(message: string, fields: Record<string, unknown>): unknown };
}

/** An attachment about to be recorded: the message's wamid, Meta's media id, its type and input. */
export interface ArrivingMedia {
  wamid: string;
  mediaId: string;
  type: string;
  input: InboundInput & { attachment: NonNullable<InboundInput['attachment']> };
}

/**
 * Keeps a Cloud API device's inbound attachment in the media store on arrival, as the sender keeps
 * a linked device's (docs/media.md "Inbound media kept on arrival"; services/sender's
 * InboundMediaKeeper): only with S3 and only the types and sizes the device chose; downloaded from
 * Meta (GraphClient.downloadMedia: the guarded client, the SHA-256 checked, at most the device's
 * `inboundMaxBytes`), stored, then the message is recorded with `mediaId` and a pre-signed URL and
 * the real size. Whatever fails — Meta, the store, the quota — the message is recorded all the
 * same with `mediaError`, and its attachment can still be downloaded on demand. The file is fetched
 * before Meta's delivery is answered, as the linked engine keeps it before the message is recorded.
 */
export async function keepOnArrival(
  deps: KeepMediaDeps,
  deviceId: string,
  arriving: ArrivingMedia,
): Promise<void> {
  if (deps.media.kind !== 's3') return;
  const wanted = await deps.settings.get(deviceId);
  if (!(wanted.inboundTypes as string[]).includes(arriving.type)) return;
  if (await deps.recorded(deviceId, arriving.wamid)) return;
  const { input } = arriving;
  const notKept = (why: InboundKeepError) => {
    input.keptMedia = { mediaError: why };
    deps.metrics.mediaInboundKept.inc({ outcome: why });
  };
  const config = await deps.devices.get(deviceId);
  if (!config) return notKept('download_failed');
  let file;
  try {
    file = await deps.graph.downloadMedia(config, arriving.mediaId, wanted.inboundMaxBytes);
  } catch (err) {
    if (err instanceof MediaTooLargeError) return notKept('too_large');
    if (err instanceof GraphError || err instanceof GraphUnreachableError) {
      deps.logger.warn('inbound media not downloaded to keep', { err: serializeError(err) });
      return notKept('download_failed');
    }
    throw err;
  }
  const messageId = randomUUID();
  try {
    const stored = await deps.media.put(deviceId, {
      bytes: file.bytes,
      mimeType: file.mimeType,
      ...(input.attachment.fileName ? { fileName: input.attachment.fileName } : {}),
      source: 'inbound',
      messageId,
    });
    if (isQuotaRefusal(stored)) return notKept('quota_full');
    const shown = await deps.media.show(deviceId, stored.mediaId);
    input.messageId = messageId;
    input.keptMedia = {
      mediaId: stored.mediaId,
      ...(shown?.url ? { url: shown.url, urlExpiresAt: shown.urlExpiresAt } : {}),
    };
    // Meta does not say a file's size in the webhook: the file kept does.
    input.attachment.size = file.bytes.length;
    deps.metrics.mediaInboundKept.inc({ outcome: 'kept' });
  } catch (err) {
    deps.logger.warn('inbound media not kept: the media store failed', { err: serializeError(err) });
    notKept('media_store_unavailable');
  }
}
