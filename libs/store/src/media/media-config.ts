import Joi from 'joi';
import type { Env } from '@mgw/common';

/**
 * Where media objects are kept (docs/media.md): without `MEDIA_STORE`, in Redis (sealed, bounded
 * per device); with `MEDIA_STORE=s3://bucket[/prefix]`, in that bucket of an S3-compatible server.
 * Credentials are read here and handed to the S3 client only: never logged, never in an error.
 */
export const mediaEnv: Joi.PartialSchemaMap = {
  MEDIA_STORE: Joi.string()
    .pattern(/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[\w!.*'()/-]*)?$/)
    .messages({ 'string.pattern.base': '"MEDIA_STORE" must be s3://<bucket>[/<prefix>]' }),
  MEDIA_S3_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  MEDIA_S3_PUBLIC_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }),
  MEDIA_S3_REGION: Joi.string().default('us-east-1'),
  MEDIA_S3_ACCESS_KEY_ID: Joi.string(),
  MEDIA_S3_SECRET_ACCESS_KEY: Joi.string(),
  MEDIA_S3_FORCE_PATH_STYLE: Joi.boolean(),
  MEDIA_S3_SSE: Joi.string().valid('AES256', 'aws:kms', 'none').default('AES256'),
  MEDIA_S3_SSE_KMS_KEY_ID: Joi.string(),
  MEDIA_S3_TIMEOUT_MS: Joi.number().integer().min(100).default(15_000),
  MEDIA_RETENTION_SECONDS: Joi.number()
    .integer()
    .min(1)
    .default(24 * 3600),
  MEDIA_URL_TTL_SECONDS: Joi.number()
    .integer()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600),
  MEDIA_DEVICE_MAX_BYTES: Joi.number().integer().min(1),
  MEDIA_DEVICE_MAX_OBJECTS: Joi.number().integer().min(1).default(10_000),
  MEDIA_SWEEP_INTERVAL_MS: Joi.number().integer().min(100).default(60_000),
};

export interface S3MediaConfig {
  bucket: string;
  /** Key prefix inside the bucket ('' or ending in '/'). */
  prefix: string;
  endpoint?: string;
  /** The endpoint written into pre-signed URLs, when clients reach S3 by another name. */
  publicEndpoint?: string;
  region: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  forcePathStyle: boolean;
  /** Server-side encryption asked for on every put. */
  sse: 'AES256' | 'aws:kms' | 'none';
  sseKmsKeyId?: string;
  timeoutMs: number;
}

export interface MediaConfig {
  /** Set with MEDIA_STORE: the bucket; else the Redis store. */
  s3?: S3MediaConfig;
  retentionSeconds: number;
  urlTtlSeconds: number;
  deviceMaxBytes: number;
  deviceMaxObjects: number;
  sweepIntervalMs: number;
}

/** A device's default media quota: Redis holds the bytes itself, so it gets the smaller one. */
const DEFAULT_DEVICE_MAX_BYTES = { redis: 64 * 1024 * 1024, s3: 1024 * 1024 * 1024 };

export function mediaConfig(e: Env): MediaConfig {
  const store = e.MEDIA_STORE as string | undefined;
  const s3 = store ? s3Config(e, store) : undefined;
  return {
    ...(s3 ? { s3 } : {}),
    retentionSeconds: e.MEDIA_RETENTION_SECONDS,
    urlTtlSeconds: e.MEDIA_URL_TTL_SECONDS,
    deviceMaxBytes: e.MEDIA_DEVICE_MAX_BYTES ?? DEFAULT_DEVICE_MAX_BYTES[s3 ? 's3' : 'redis'],
    deviceMaxObjects: e.MEDIA_DEVICE_MAX_OBJECTS,
    sweepIntervalMs: e.MEDIA_SWEEP_INTERVAL_MS,
  };
}

function s3Config(e: Env, store: string): S3MediaConfig {
  const [bucket, ...rest] = store.slice('s3://'.length).split('/');
  const prefix = rest.filter(Boolean).join('/');
  const id = e.MEDIA_S3_ACCESS_KEY_ID as string | undefined;
  const secret = e.MEDIA_S3_SECRET_ACCESS_KEY as string | undefined;
  if (Boolean(id) !== Boolean(secret))
    throw new Error('MEDIA_S3_ACCESS_KEY_ID and MEDIA_S3_SECRET_ACCESS_KEY go together');
  if (e.MEDIA_S3_SSE === 'aws:kms' && !e.MEDIA_S3_SSE_KMS_KEY_ID)
    throw new Error('MEDIA_S3_SSE=aws:kms needs MEDIA_S3_SSE_KMS_KEY_ID');
  const endpoint = e.MEDIA_S3_ENDPOINT as string | undefined;
  return {
    bucket: bucket!,
    prefix: prefix ? `${prefix}/` : '',
    ...(endpoint ? { endpoint } : {}),
    ...(e.MEDIA_S3_PUBLIC_ENDPOINT ? { publicEndpoint: e.MEDIA_S3_PUBLIC_ENDPOINT as string } : {}),
    region: e.MEDIA_S3_REGION,
    ...(id && secret ? { credentials: { accessKeyId: id, secretAccessKey: secret } } : {}),
    // An endpoint of its own is usually MinIO, Ceph or a test server: path-style by default.
    forcePathStyle: e.MEDIA_S3_FORCE_PATH_STYLE ?? Boolean(endpoint),
    sse: e.MEDIA_S3_SSE,
    ...(e.MEDIA_S3_SSE_KMS_KEY_ID ? { sseKmsKeyId: e.MEDIA_S3_SSE_KMS_KEY_ID as string } : {}),
    timeoutMs: e.MEDIA_S3_TIMEOUT_MS,
  };
}
