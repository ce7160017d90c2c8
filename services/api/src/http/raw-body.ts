import type { RequestHandler } from 'express';
import { ERRORS, type ValidationDetail } from '@mgw/contracts';
import { ApiError } from './api-error.js';
import { refuse } from './body.js';

/** A MIME type: type/subtype with optional parameters (the attachment's `mimeType` rule). */
const MIME_TYPE = /^[\w.+-]+\/[\w.+-]+(\s*;\s*[\w.+-]+=[\w.+-]+)*$/;

const invalid = (path: string[], message: string) =>
  ApiError.invalid([{ path, message } satisfies ValidationDetail]);

export interface RawBodyOptions {
  limitBytes: number;
  tooLargeError: string;
  /** What a missing or malformed Content-Type, and an empty body, are told (default: a file's words). */
  typeError?: string;
  emptyError?: string;
  /** A body that stalls this long (no byte arrives) is answered 408 and its connection closed. */
  idleTimeoutMs: number;
}

/**
 * Reads a file sent as the request body (POST /media) into `req.body` (a Buffer): its type is
 * the `Content-Type` header, which must be a MIME type. Refused with the error envelope: no body
 * or no type (400), a `Content-Encoding` (400: the file is sent as it is), a declared or streamed
 * size over `limitBytes` (413, from the header or the first byte over), a stalled body (408).
 */
export function rawBody(opts: RawBodyOptions): RequestHandler {
  return (req, _res, next) => {
    const type = req.headers['content-type'];
    if (!type || !MIME_TYPE.test(type) || type.length > 255)
      return refuse(
        req,
        next,
        invalid(['Content-Type'], opts.typeError ?? 'Content-Type must be the MIME type of the file'),
      );
    const encoding = req.headers['content-encoding'];
    if (encoding && encoding.toLowerCase() !== 'identity')
      return refuse(
        req,
        next,
        invalid(['Content-Encoding'], 'Send the file as it is, without a Content-Encoding'),
      );
    if (Number(req.headers['content-length']) > opts.limitBytes)
      return refuse(req, next, new ApiError(413, opts.tooLargeError));
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: ApiError, close = false) => {
      if (done) return;
      done = true;
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      if (err) {
        chunks.length = 0;
        return refuse(req, next, err, close);
      }
      if (size === 0) return next(invalid([], opts.emptyError ?? ERRORS.mediaBodyRequired));
      req.body = Buffer.concat(chunks, size);
      next();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > opts.limitBytes) return finish(new ApiError(413, opts.tooLargeError));
      chunks.push(chunk);
      idle.refresh();
    };
    const onEnd = () => finish();
    const onClose = () => {
      if (!req.complete) finish(invalid([], 'The request body ended early'));
    };
    const idle = setTimeout(() => finish(new ApiError(408, ERRORS.requestTimeout), true), opts.idleTimeoutMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    if (req.destroyed) onClose();
  };
}
