/** POST /otp and its answer in the OpenAPI document. */
import { OTP_LANGUAGES, emptyQuerySchema, otpBodySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, str, timestamp } from '../../openapi/schema-helpers.js';

/** POST /otp's answer once the OTP is sent. */
export const otpSchemas: Record<string, JsonSchema> = {
  OtpResult: closed(
    {
      success: { const: true },
      message: { const: 'OTP sent successfully' },
      data: closed(
        {
          messageId: { type: 'string' },
          platformMessageId: str('The WhatsApp message id.'),
          phone: { type: 'string' },
          code: str('The code, as digits.'),
          language: { enum: [...OTP_LANGUAGES] },
          sentAt: timestamp('When WhatsApp acknowledged it.'),
        },
        ['messageId', 'platformMessageId', 'phone', 'code', 'language', 'sentAt'],
      ),
    },
    ['success', 'message', 'data'],
  ),
};

/** The OTP route's operation, by handler (mount.ts). */
export function otpOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<'otp'> {
  return {
    otp: operation({
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
  };
}
