import type { Agent } from 'node:http';
import {
  OutboundError,
  OutboundRefusedError,
  OutboundTooLargeError,
  createOutboundClient,
  type OutboundConfig,
} from '@mgw/common';
import { ATTACHMENT_MAX_BYTES, FAILURE_REASONS } from '@mgw/contracts';
import { PermanentSendError } from './send-errors.js';

/** Downloads an attachment URL; every failure is permanent and carries the message's reason. */
export type AttachmentFetcher = (
  url: string,
  /** The device's proxy: the download goes through it (still vetted by the guard). */
  via?: Agent,
) => Promise<Buffer>;

/**
 * Attachment URLs come from clients, so they are fetched only through the guarded outbound
 * client: private, loopback and link-local addresses (also behind a redirect or a DNS answer) are
 * refused before any connection, ports are 80/443 unless the host is allowed, and the download
 * is capped at the spec's 10 MB and `timeoutMs`.
 */
export function createAttachmentFetcher(opts: {
  outbound: OutboundConfig;
  timeoutMs: number;
  /** Extra CAs (the sandbox's media host). */
  ca?: string;
}): AttachmentFetcher {
  const client = createOutboundClient({
    allowList: opts.outbound.allowList,
    timeoutMs: opts.timeoutMs,
    maxBytes: ATTACHMENT_MAX_BYTES,
    userAgent: 'messenger-gateway',
    ...(opts.ca ? { ca: opts.ca } : {}),
  });
  return async (url, via) => {
    let res;
    try {
      res = await client.fetch(url, via ? { via } : {});
    } catch (err) {
      throw toPermanent(err);
    }
    if (res.status < 200 || res.status > 299) {
      throw new PermanentSendError(FAILURE_REASONS.attachmentUnreachable, `the URL answered ${res.status}`);
    }
    return res.body;
  };
}

function toPermanent(err: unknown): PermanentSendError {
  if (err instanceof OutboundRefusedError && err.reason !== 'unresolvable') {
    return new PermanentSendError(FAILURE_REASONS.attachmentUrlNotAllowed, err.message);
  }
  if (err instanceof OutboundTooLargeError) {
    return new PermanentSendError(FAILURE_REASONS.attachmentTooLarge, 'attachment exceeds 10 MB');
  }
  const detail = err instanceof OutboundError ? err.message : String(err);
  return new PermanentSendError(FAILURE_REASONS.attachmentUnreachable, `fetch failed: ${detail}`);
}
