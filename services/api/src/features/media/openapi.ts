/**
 * POST /media, GET and DELETE /media/{id}, GET and PUT /media/settings in the OpenAPI document
 * (docs/media.md).
 */
import {
  ATTACHMENT_TYPES,
  MEDIA_UPLOAD_MAX_BYTES,
  emptyQuerySchema,
  mediaSettingsBodySchema,
  mediaUploadQuerySchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, str } from '../../openapi/schema-helpers.js';

const time = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });
const result = (schema: string): JsonSchema =>
  closed({ success: { type: 'boolean', const: true }, data: { $ref: `#/components/schemas/${schema}` } }, [
    'success',
    'data',
  ]);

export const mediaSchemas: Record<string, JsonSchema> = {
  MediaObject: closed(
    {
      mediaId: str('Its id: `attachment.mediaId` of POST /send names it.'),
      deviceId: str('The device it belongs to (only its tokens reach it).'),
      size: { type: 'integer', minimum: 1, description: 'Bytes.' },
      mimeType: str('The upload’s Content-Type, or the inbound file’s type.'),
      fileName: str('`?filename=` of the upload, or the inbound document’s name.'),
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the bytes (hex).' },
      source: {
        enum: ['upload', 'inbound'],
        description: 'POST /media, or an inbound attachment kept on arrival.',
      },
      messageId: str('Inbound: the message it came with.'),
      createdAt: time('When it was stored.'),
      expiresAt: time('When it is deleted (MEDIA_RETENTION_SECONDS after it was stored).'),
      store: { enum: ['redis', 's3'], description: 'Where its bytes are (MEDIA_STORE).' },
      url: str('S3 only: a pre-signed GET of the file, signed for this answer.'),
      urlExpiresAt: time('When `url` stops working (MEDIA_URL_TTL_SECONDS, at most `expiresAt`).'),
    },
    ['mediaId', 'deviceId', 'size', 'mimeType', 'sha256', 'source', 'createdAt', 'expiresAt', 'store'],
  ),
  MediaObjectResult: result('MediaObject'),
  MediaDeleted: closed(
    {
      success: { type: 'boolean', const: true },
      data: closed({ mediaId: { type: 'string' }, deleted: { type: 'boolean', const: true } }, [
        'mediaId',
        'deleted',
      ]),
    },
    ['success', 'data'],
  ),
  MediaSettings: closed(
    {
      inboundTypes: {
        type: 'array',
        items: { enum: [...ATTACHMENT_TYPES] },
        description: 'Inbound attachment types kept in the media store on arrival (only with S3).',
      },
      inboundMaxBytes: {
        type: 'integer',
        minimum: 1,
        description: 'Larger inbound attachments are not kept.',
      },
      store: { enum: ['redis', 's3'], description: 'Where this gateway keeps media (MEDIA_STORE).' },
    },
    ['inboundTypes', 'inboundMaxBytes', 'store'],
  ),
  MediaSettingsResult: result('MediaSettings'),
};

const ABOUT =
  'An attachment uploaded once and named by its id in any number of sends (a list of 1,000 does not repeat the file). Its bytes are kept in Redis (sealed with AES-256-GCM; no URL) or, with MEDIA_STORE, in an S3 bucket (server-side encryption; a pre-signed `url`). It belongs to the token’s device: any other device’s token gets 404, and pool tokens get 403 (a pool spreads a list over several devices). Deleted after MEDIA_RETENTION_SECONDS, or by DELETE.';

export function mediaOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<'getSettings' | 'putSettings' | 'upload' | 'get' | 'remove'> {
  const r = config.rateLimits;
  const upload = operation({
    tag: 'Media',
    summary: 'Upload an attachment once (the file is the body)',
    description: `${ABOUT}\n\nThe request body is the file itself, \`Content-Type\` its MIME type, at most ${MEDIA_UPLOAD_MAX_BYTES} bytes (413 above); \`?filename=\` names it (reduced to its base name, or refused: docs/media.md). A \`Content-Type\` the file's bytes contradict (\`text/html\` for a PDF, \`application/pdf\` for HTML) is 400 naming \`Content-Type\`. 429 \`Too much media is stored for this device…\` with \`stored\` and \`limit\` when the device's quota (MEDIA_DEVICE_MAX_BYTES, MEDIA_DEVICE_MAX_OBJECTS) is full; 503 when the media store did not take it (nothing is stored then).`,
    rateLimit: r.media,
    query: mediaUploadQuerySchema,
    success: { status: 201, schema: 'MediaObjectResult', description: 'Stored.' },
    errors: [413],
  });
  // The file, not JSON.
  (upload as { requestBody?: unknown }).requestBody = {
    required: true,
    content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
  };
  const get = operation({
    tag: 'Media',
    summary: 'A media object (with a pre-signed URL in S3)',
    description: `${ABOUT} Each answer signs a fresh URL.`,
    rateLimit: r.messages,
    query: emptyQuerySchema,
    success: { status: 200, schema: 'MediaObjectResult', description: 'The object.' },
    errors: [404],
  });
  const remove = operation({
    tag: 'Media',
    summary: 'Delete a media object',
    description:
      'Its id names nothing from now on (a queued message that still needs its bytes fails `media_gone`); its bytes are deleted (in S3, by the retention sweep if the delete fails).',
    rateLimit: r.media,
    query: emptyQuerySchema,
    success: { status: 200, schema: 'MediaDeleted', description: 'Deleted.' },
    errors: [404, 413],
  });
  const getSettings = operation({
    tag: 'Media',
    summary: 'Which inbound attachments the device keeps on arrival',
    description:
      'With MEDIA_STORE (S3), inbound attachments of these types and sizes are stored when they arrive, and `message.received` carries `attachment.mediaId`, `url` and `urlExpiresAt`. Default: none (download on demand, GET /messages/{id}/media).',
    rateLimit: r.messages,
    query: emptyQuerySchema,
    success: { status: 200, schema: 'MediaSettingsResult', description: 'The settings.' },
    errors: [],
  });
  const putSettings = operation({
    tag: 'Media',
    summary: 'Choose which inbound attachments the device keeps on arrival',
    description: 'Sets the given fields; the other keeps its value.',
    rateLimit: r.media,
    query: emptyQuerySchema,
    body: mediaSettingsBodySchema,
    success: { status: 200, schema: 'MediaSettingsResult', description: 'The settings after the change.' },
    errors: [413],
  });
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 1 } };
  for (const op of [get, remove]) {
    const o = op as { parameters?: JsonSchema[] };
    o.parameters = [idParam, ...(o.parameters ?? [])];
  }
  return { getSettings, putSettings, upload, get, remove };
}
