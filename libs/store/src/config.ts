import Joi from 'joi';
import type { Env } from '@mgw/common';

/** How long message records (and what they need, such as sent protos) are kept. */
export const storeEnv: Joi.PartialSchemaMap = {
  MESSAGE_RETENTION_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(7 * 24 * 3600),
};

export interface StoreConfig {
  messageRetentionSeconds: number;
}

export function storeConfig(e: Env): StoreConfig {
  return { messageRetentionSeconds: e.MESSAGE_RETENTION_SECONDS };
}
