import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3MediaConfig } from './media-config.js';
import {
  MediaStoreUnavailableError,
  type MediaBackend,
  type MediaRef,
  type PresignHeaders,
} from './media-backend.js';

/** Expiry stamps in keys are epoch seconds, zero-padded so that key order is expiry order. */
const STAMP_DIGITS = 11;
/** At most this many objects deleted by one sweep (the next one goes on). */
const SWEEP_MAX = 1000;

/**
 * Media in an S3-compatible bucket. Each object's key starts with its expiry,
 * `<prefix><expiry, epoch s>/<deviceId>/<mediaId>`, so the retention sweep lists the bucket in
 * key order and stops at the first object not yet due: no index of objects is kept anywhere, and
 * it works on every S3-compatible server (a lifecycle rule only counts whole days, and not every
 * server has one). Encryption at rest is the bucket's server-side encryption (SSE-S3 by default,
 * or SSE-KMS), asked for on every put: a pre-signed URL must hand the client the file itself,
 * which our own encryption would not allow without the gateway in the path.
 */
export class S3MediaBackend implements MediaBackend {
  readonly kind = 's3';
  private readonly client: S3Client;
  /** Signs URLs with the public endpoint when clients reach the bucket by another name. */
  private readonly signer: S3Client;

  constructor(private readonly config: S3MediaConfig) {
    this.client = s3Client(config, config.endpoint);
    this.signer = config.publicEndpoint ? s3Client(config, config.publicEndpoint) : this.client;
  }

  keyOf(ref: MediaRef): string {
    const stamp = String(Math.ceil(ref.expiresAtMs / 1000)).padStart(STAMP_DIGITS, '0');
    return `${this.config.prefix}${stamp}/${ref.deviceId}/${ref.mediaId}`;
  }

  async put(ref: MediaRef, bytes: Buffer, mimeType: string): Promise<void> {
    const input: PutObjectCommandInput = {
      Bucket: this.config.bucket,
      Key: this.keyOf(ref),
      Body: bytes,
      ContentLength: bytes.length,
      ContentType: mimeType,
      ...(this.config.sse !== 'none' ? { ServerSideEncryption: this.config.sse } : {}),
      ...(this.config.sse === 'aws:kms' ? { SSEKMSKeyId: this.config.sseKmsKeyId } : {}),
    };
    await this.call('put', () => this.client.send(new PutObjectCommand(input)));
  }

  async get(ref: MediaRef): Promise<Buffer | undefined> {
    return this.call('get', async () => {
      try {
        const res = await this.client.send(
          new GetObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(ref) }),
        );
        return Buffer.from(await res.Body!.transformToByteArray());
      } catch (err) {
        if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
        throw err;
      }
    });
  }

  async presign(ref: MediaRef, seconds: number, headers: PresignHeaders): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.config.bucket,
      Key: this.keyOf(ref),
      ResponseContentType: headers.mimeType,
      ...(headers.fileName
        ? {
            ResponseContentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(headers.fileName)}`,
          }
        : {}),
    });
    // Signing is local (no request): it cannot fail for the server's sake.
    return getSignedUrl(this.signer, command, { expiresIn: seconds });
  }

  async delete(ref: MediaRef): Promise<void> {
    await this.call('delete', () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(ref) })),
    );
  }

  async sweep(nowMs: number): Promise<number> {
    const now = Math.floor(nowMs / 1000);
    let deleted = 0;
    let token: string | undefined;
    for (;;) {
      const page = await this.call('list', () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.config.bucket,
            Prefix: this.config.prefix,
            MaxKeys: SWEEP_MAX,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const { Key } of page.Contents ?? []) {
        const stamp = Number(Key!.slice(this.config.prefix.length).split('/')[0]);
        // Keys are in expiry order: the first one not due ends the sweep.
        if (!Number.isFinite(stamp) || stamp > now || deleted >= SWEEP_MAX) return deleted;
        await this.call('delete', () =>
          this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key })),
        );
        deleted++;
      }
      if (!page.IsTruncated || !page.NextContinuationToken) return deleted;
      token = page.NextContinuationToken;
    }
  }

  close(): void {
    this.client.destroy();
    if (this.signer !== this.client) this.signer.destroy();
  }

  /** Any failure of the server as one error that names the operation, never the credentials. */
  private async call<T>(op: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode ? ` (HTTP ${e.$metadata.httpStatusCode})` : '';
      // The SDK's error name (or the socket's code), never its message: nothing of the request.
      const what = e.name && e.name !== 'Error' ? e.name : (e.code ?? 'connection failed');
      throw new MediaStoreUnavailableError(`S3 ${op} failed: ${what}${status}`);
    }
  }
}

function s3Client(config: S3MediaConfig, endpoint: string | undefined): S3Client {
  return new S3Client({
    region: config.region,
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: config.forcePathStyle,
    ...(config.credentials ? { credentials: config.credentials } : {}),
    // Checksums only where S3 requires them: many S3-compatible servers refuse the SDK's default
    // streaming trailers (aws-chunked with a CRC32 trailer).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
    requestHandler: { connectionTimeout: config.timeoutMs, requestTimeout: config.timeoutMs },
  });
}
