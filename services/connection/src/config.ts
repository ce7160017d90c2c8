import Joi from 'joi';
import { validateEnv } from '@mgw/common';
import {
  MESSENGER_SERVICE_ENV,
  messengerRules,
  messengerServiceConfig,
  type MessengerServiceConfig,
} from '@mgw/messenger';

const connectionEnv: Joi.PartialSchemaMap = {
  QR_MAX_ATTEMPTS: Joi.number().integer().min(1).default(5),
  // The API waits this long for an answer; a logout gives up (503) a little before it does.
  CONNECTION_REPLY_TIMEOUT_MS: Joi.number().integer().min(100).default(30_000),
  // Requests handled at once per process. A slot mostly waits (for a QR, for a sender's logout
  // reply), and requests of one device coalesce, so one slow device holds one or two slots.
  CONNECTION_CONCURRENCY: Joi.number().integer().min(1).max(1000).default(64),
  // A passkey-gated link: how long WhatsApp may take to answer an assertion (docs/passkeys.md).
  PASSKEY_CONTINUATION_TIMEOUT_MS: Joi.number().integer().min(100).max(600_000).default(60_000),
};

export interface ConnectionConfig extends MessengerServiceConfig {
  /** QR codes shown before a pairing attempt gives up. */
  qrMaxAttempts: number;
  connectionReplyTimeoutMs: number;
  connectionConcurrency: number;
  passkeyContinuationTimeoutMs: number;
}

/** Every environment variable this service reads, by schema piece. */
export const CONNECTION_ENV = [...MESSENGER_SERVICE_ENV, connectionEnv];

export function loadConnectionConfig(env: NodeJS.ProcessEnv = process.env): ConnectionConfig {
  const e = validateEnv(CONNECTION_ENV, env, messengerRules);
  return {
    ...messengerServiceConfig(e),
    qrMaxAttempts: e.QR_MAX_ATTEMPTS,
    connectionReplyTimeoutMs: e.CONNECTION_REPLY_TIMEOUT_MS,
    connectionConcurrency: e.CONNECTION_CONCURRENCY,
    passkeyContinuationTimeoutMs: e.PASSKEY_CONTINUATION_TIMEOUT_MS,
  };
}
