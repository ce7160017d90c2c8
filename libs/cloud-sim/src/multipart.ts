/**
 * A small multipart/form-data reader (RFC 7578) for the media upload: the whole body is already
 * in memory (bounded by the server), so the parts are sliced out of it. Returns undefined when the
 * body is not well-formed multipart.
 */
export interface FormPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** The boundary of a `multipart/form-data; boundary=…` content type, or undefined. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function dispositionParam(disposition: string, param: string): string | undefined {
  const match = new RegExp(`;\\s*${param}="([^"]*)"`, 'i').exec(disposition);
  return match?.[1];
}

export function parseMultipart(body: Buffer, boundary: string): FormPart[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at !== 0) return undefined;
  for (;;) {
    const afterDelimiter = at + delimiter.length;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString() === '--') return parts;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString() !== '\r\n') return undefined;
    const headersEnd = body.indexOf('\r\n\r\n', afterDelimiter + 2);
    if (headersEnd < 0) return undefined;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4);
    if (next < 0) return undefined;
    const headers = parseHeaders(body.subarray(afterDelimiter + 2, headersEnd).toString('utf8'));
    const disposition = headers.get('content-disposition') ?? '';
    const name = dispositionParam(disposition, 'name');
    if (!/^form-data\s*;/i.test(disposition) || name === undefined) return undefined;
    const filename = dispositionParam(disposition, 'filename');
    const contentType = headers.get('content-type');
    parts.push({
      name,
      ...(filename === undefined ? {} : { filename }),
      ...(contentType === undefined ? {} : { contentType }),
      data: body.subarray(headersEnd + 4, next),
    });
    at = next + 2;
  }
}
