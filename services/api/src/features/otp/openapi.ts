/** POST /otp in the OpenAPI document. */
import { emptyQuerySchema, otpBodySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';

export function otpPaths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema) {
  return {
    '/otp': {
      post: operation({
        tag: 'Messages',
        summary: 'Send a one-time password',
        description:
          'Builds the text from the language template (code first, in bold) and waits until it is sent.',
        rateLimit: config.rateLimits.otp,
        query: emptyQuerySchema,
        body: otpBodySchema,
        idempotent: true,
        success: { status: 200, schema: 'OtpResult', description: 'Sent.' },
        errors: [409, 413, 422, 502, 504],
      }),
    },
  };
}
