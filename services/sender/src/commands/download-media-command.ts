import type { DeviceCommandOf } from '@mgw/contracts';
import type { CommandContext } from './command-table.js';
import { serveMediaDownload } from './media-download.js';

/**
 * `download-media` (GET /messages/:id/media): download and decrypt an inbound message's
 * attachment now and hand it to the API (media-download.ts), fetched through the device's proxy
 * like every connection made for the device.
 */
export async function downloadMedia(
  cmd: DeviceCommandOf<'download-media'>,
  { device, deps, logger, reply }: CommandContext,
): Promise<void> {
  // The devices' own media fetcher (in sandbox mode it may reach the simulator's media host).
  const fetchMedia = deps.fetchers.fetchMedia;
  await reply(
    await serveMediaDownload(
      {
        sealer: deps.encryption,
        fetchBytes: (url) => fetchMedia(url, device.conn.proxyAgent),
        redis: deps.redis,
        inbound: deps.stores.inbound,
        logger,
      },
      cmd.deviceId,
      cmd.messageId,
      cmd.requestId,
    ),
  );
}
