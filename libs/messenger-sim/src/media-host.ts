import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  aesDecryptWithIV,
  getMediaKeys,
  MEDIA_PATH_MAP,
  type BinaryNode,
  type MediaType,
} from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { SimLogger } from './logger.js';
import { iqResult, node } from './stanza.js';
import type { TlsMaterial } from './tls-certificate.js';

const MAC_LENGTH = 10;
const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
const MAX_STORED_BYTES = 512 * 1024 * 1024;

/**
 * HTTPS host for `POST /mms/<type>/<encSha256>` uploads (and GETs of what was uploaded). It keeps
 * the encrypted bytes so a simulated recipient can decrypt them with the mediaKey it receives.
 */
export class MediaHost {
  private readonly server: https.Server;
  private readonly files = new Map<string, Buffer>();
  private storedBytes = 0;
  /** Accepted uploads so far; lets a test prove media sent to many recipients was uploaded once. */
  uploads = 0;
  readonly auth = randomBytes(16).toString('base64url');
  hostname = '';

  constructor(
    tls: TlsMaterial,
    private readonly logger: SimLogger,
  ) {
    this.server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://sim');
      if (req.method === 'GET') {
        const file = this.files.get(url.pathname);
        res.writeHead(file ? 200 : 404, { 'content-type': 'application/octet-stream' });
        res.end(file);
        return;
      }
      if (req.method !== 'POST' || !url.pathname.startsWith('/mms/')) {
        res.writeHead(404).end();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('error', (err) => this.logger.debug({ err }, 'upload aborted'));
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_UPLOAD_BYTES) chunks.push(chunk);
      });
      req.on('end', () => {
        if (url.searchParams.get('auth') !== this.auth || size > MAX_UPLOAD_BYTES) {
          res.writeHead(size > MAX_UPLOAD_BYTES ? 413 : 401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'rejected' }));
          return;
        }
        const { url: mediaUrl, directPath } = this.accept(url.pathname, Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ url: mediaUrl, direct_path: directPath }));
      });
    });
  }

  /** Stores an accepted upload of `POST <uploadPath>` and names where it can be fetched. */
  private accept(uploadPath: string, body: Buffer): { url: string; directPath: string } {
    const directPath = `${uploadPath.replace(/=+$/, '')}-${randomBytes(6).toString('hex')}.enc`;
    this.store(directPath, body);
    this.uploads++;
    this.logger.debug({ directPath, bytes: body.length }, 'media uploaded');
    return { url: `https://${this.hostname}${directPath}`, directPath };
  }

  /**
   * A simulated phone's upload: the same path a client would POST to (`/mms/<type>/<encSha256>`),
   * without the HTTPS round trip to ourselves.
   */
  uploadFromPhone(mediaType: MediaType, body: Buffer): { url: string; directPath: string } {
    const token = createHash('sha256').update(body).digest('base64url');
    return this.accept(`${MEDIA_PATH_MAP[mediaType]}/${token}`, body);
  }

  /** Serves `body` at `path` (a profile photo a client set): its URL. */
  publish(path: string, body: Buffer): string {
    this.store(path, body);
    return `https://${this.hostname}${path}`;
  }

  /** Keeps uploads up to a byte budget, dropping the oldest first, so a long sandbox run stays bounded. */
  private store(path: string, body: Buffer): void {
    this.files.set(path, body);
    this.storedBytes += body.length;
    for (const [oldPath, old] of this.files) {
      if (this.storedBytes <= MAX_STORED_BYTES || oldPath === path) break;
      this.files.delete(oldPath);
      this.storedBytes -= old.length;
    }
  }

  stats(): { uploads: number; files: number; storedBytes: number } {
    return { uploads: this.uploads, files: this.files.size, storedBytes: this.storedBytes };
  }

  /** Binds on `host`; clients are told to upload to `publicHost` (they differ in containers). */
  async listen(host: string, publicHost: string, port = 0): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, resolve);
    });
    this.hostname = `${publicHost}:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  answerMediaConn(conn: ClientConnection, iq: BinaryNode): void {
    conn.send(
      iqResult(iq, [
        node('media_conn', { auth: this.auth, ttl: '300', auth_ttl: '21600', max_buckets: '12' }, [
          node('host', { hostname: this.hostname, maxContentLengthBytes: String(MAX_UPLOAD_BYTES) }),
        ]),
      ]),
    );
  }

  /** Decrypts an upload as a recipient would: verify the 10-byte MAC, then AES-CBC. */
  async decrypt(
    ref: { directPath?: string | null; url?: string | null },
    mediaKey: Uint8Array,
    type: MediaType,
  ): Promise<Buffer> {
    const path = ref.directPath ?? (ref.url ? new URL(ref.url).pathname : undefined);
    const file = path ? this.files.get(path) : undefined;
    if (!file) throw new Error(`media not found on the simulated host: ${path ?? '(no path)'}`);
    const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, type);
    const enc = file.subarray(0, file.length - MAC_LENGTH);
    const mac = file.subarray(file.length - MAC_LENGTH);
    const expected = createHmac('sha256', Buffer.from(macKey ?? []))
      .update(iv)
      .update(enc)
      .digest()
      .subarray(0, MAC_LENGTH);
    if (!expected.equals(mac)) throw new Error('media MAC mismatch');
    return aesDecryptWithIV(enc, Buffer.from(cipherKey), Buffer.from(iv));
  }
}

export const sha256Hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * Encrypts a file as a phone does before uploading it (`decrypt`'s inverse): AES-256-CBC with keys
 * from a fresh mediaKey (`getMediaKeys(mediaKey, type)`), then HMAC-SHA256 of iv + ciphertext
 * truncated to 10 bytes appended.
 */
export async function encryptLikePhone(
  plain: Buffer,
  type: MediaType,
): Promise<{ mediaKey: Buffer; body: Buffer }> {
  const mediaKey = randomBytes(32);
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, type);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const enc = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', Buffer.from(macKey ?? []))
    .update(iv)
    .update(enc)
    .digest();
  return { mediaKey, body: Buffer.concat([enc, mac.subarray(0, MAC_LENGTH)]) };
}
