/**
 * What a file's first bytes say it is, to refuse an upload whose `Content-Type` contradicts them
 * (docs/media.md): `text/html` for a PDF is a page a browser would run from a pre-signed URL,
 * `application/pdf` for HTML hides a page behind a document's type.
 *
 * A table of signatures, not a library: `file-type` (the maintained one) knows hundreds of binary
 * formats but not HTML, the one that matters most here, and it is asynchronous and pulls in a
 * tokenizer stack; the kinds below are what WhatsApp carries, each told by a few fixed bytes.
 * Bytes that match none are not judged: any declared type passes (a text file, a format not
 * listed). `application/octet-stream` says nothing, so it never contradicts.
 */

/** A recognised kind of file: its name and the declared types that agree with it. */
export interface SniffedKind {
  kind: string;
  /** The type it is usually declared as (the message names it). */
  type: string;
  /** Whether a declared type (its essence, lowercase) agrees with the bytes. */
  agrees(essence: string): boolean;
}

const ascii = (s: string) => Array.from(s, (c) => c.charCodeAt(0));

const startsWith = (bytes: Uint8Array, signature: number[], at = 0) =>
  bytes.length >= at + signature.length && signature.every((b, i) => bytes[at + i] === b);

const oneOf =
  (...types: string[]) =>
  (essence: string) =>
    types.includes(essence);

/** Tags that open an HTML document (after a BOM and white space), as browsers' sniffing knows them. */
const HTML_START = /^\s*<(?:!doctype\s+html|html|head|body|script|iframe|title)[\s>]/i;

const KINDS: (SniffedKind & { test(bytes: Uint8Array): boolean })[] = [
  {
    kind: 'PDF',
    type: 'application/pdf',
    test: (b) => startsWith(b, ascii('%PDF-')),
    agrees: oneOf('application/pdf', 'application/x-pdf'),
  },
  {
    kind: 'PNG',
    type: 'image/png',
    test: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    agrees: oneOf('image/png', 'image/apng'),
  },
  {
    kind: 'JPEG',
    type: 'image/jpeg',
    test: (b) => startsWith(b, [0xff, 0xd8, 0xff]),
    agrees: oneOf('image/jpeg', 'image/jpg', 'image/pjpeg'),
  },
  {
    kind: 'GIF',
    type: 'image/gif',
    test: (b) => startsWith(b, ascii('GIF87a')) || startsWith(b, ascii('GIF89a')),
    agrees: oneOf('image/gif'),
  },
  {
    kind: 'WebP',
    type: 'image/webp',
    test: (b) => startsWith(b, ascii('RIFF')) && startsWith(b, ascii('WEBP'), 8),
    agrees: oneOf('image/webp'),
  },
  {
    kind: 'Ogg',
    type: 'audio/ogg',
    test: (b) => startsWith(b, ascii('OggS')),
    agrees: oneOf('audio/ogg', 'audio/opus', 'video/ogg', 'application/ogg'),
  },
  {
    // MP4, M4A, 3GP, MOV, HEIC, AVIF: one ISO media container (an `ftyp` box first).
    kind: 'MP4 (ISO media)',
    type: 'video/mp4',
    test: (b) => startsWith(b, ascii('ftyp'), 4),
    agrees: (t) =>
      t.startsWith('video/') ||
      t.startsWith('audio/') ||
      ['image/heic', 'image/heif', 'image/avif', 'application/mp4'].includes(t),
  },
  {
    // ZIP, and the formats built on it: Office (docx, xlsx, pptx), OpenDocument, EPUB, JAR, APK.
    kind: 'ZIP',
    type: 'application/zip',
    test: (b) => startsWith(b, [0x50, 0x4b, 0x03, 0x04]),
    agrees: (t) =>
      [
        'application/zip',
        'application/x-zip-compressed',
        'application/epub+zip',
        'application/java-archive',
      ].includes(t) || t.startsWith('application/vnd.'),
  },
  {
    kind: 'HTML',
    type: 'text/html',
    // The first kilobyte (past a UTF-8 BOM) holds a document's first tag; Latin-1 reads any byte.
    test: (b) => {
      const from = startsWith(b, [0xef, 0xbb, 0xbf]) ? 3 : 0;
      return HTML_START.test(Buffer.from(b.subarray(from, from + 1024)).toString('latin1'));
    },
    agrees: oneOf('text/html', 'application/xhtml+xml', 'text/plain'),
  },
];

/** The kind the bytes are, when they carry one of the signatures above. */
export function sniffMediaKind(bytes: Uint8Array): SniffedKind | undefined {
  return KINDS.find((k) => k.test(bytes));
}

/**
 * The kind the bytes are when the declared type (`Content-Type`, parameters allowed) contradicts
 * them; undefined when it agrees, when it is `application/octet-stream`, or when the bytes are of
 * no kind the table knows.
 */
export function contradictedMediaKind(declared: string, bytes: Uint8Array): SniffedKind | undefined {
  const essence = declared.split(';')[0]!.trim().toLowerCase();
  if (essence === 'application/octet-stream') return undefined;
  const kind = sniffMediaKind(bytes);
  return kind && !kind.agrees(essence) ? kind : undefined;
}
