import { ATTACHMENT_MAX_BYTES, FAILURE_REASONS, type AttachmentSource } from '@mgw/contracts';
import type { MediaStore } from '@mgw/store';
import { PermanentSendError } from './send-errors.js';

/** Bytes of an attachment: fetched from its URL (10 MB cap, timeout) or read from its stored blob. */
export async function loadAttachment(
  media: MediaStore,
  deviceId: string,
  source: AttachmentSource,
  timeoutMs: number,
): Promise<Buffer> {
  if ('blobId' in source) {
    const bytes = await media.get(deviceId, source.blobId);
    if (!bytes)
      throw new PermanentSendError(FAILURE_REASONS.attachmentUnreachable, 'stored attachment expired');
    return bytes;
  }
  return fetchCapped(source.url, timeoutMs);
}

async function fetchCapped(url: string, timeoutMs: number): Promise<Buffer> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  } catch (err) {
    throw new PermanentSendError(
      FAILURE_REASONS.attachmentUnreachable,
      `fetch failed: ${(err as Error).message}`,
    );
  }
  if (!res.ok || !res.body) {
    throw new PermanentSendError(FAILURE_REASONS.attachmentUnreachable, `fetch answered ${res.status}`);
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > ATTACHMENT_MAX_BYTES) {
    await res.body.cancel();
    throw new PermanentSendError(FAILURE_REASONS.attachmentTooLarge, `attachment is ${declared} bytes`);
  }
  // Count while reading: a missing or lying Content-Length must not let 1 GB into memory.
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > ATTACHMENT_MAX_BYTES) {
        await res.body.cancel().catch(() => undefined);
        throw new PermanentSendError(FAILURE_REASONS.attachmentTooLarge, 'attachment exceeds 10 MB');
      }
      chunks.push(Buffer.from(chunk));
    }
  } catch (err) {
    if (err instanceof PermanentSendError) throw err;
    throw new PermanentSendError(
      FAILURE_REASONS.attachmentUnreachable,
      `download failed: ${(err as Error).message}`,
    );
  }
  return Buffer.concat(chunks);
}
