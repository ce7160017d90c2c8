import Joi from 'joi';
import type { Env } from '@mgw/common';
import { mediaConfig, mediaEnv, type MediaConfig } from './media/media-config.js';

/** How long message records (and what they need, such as sent protos) are kept; where media is kept. */
export const storeEnv: Joi.PartialSchemaMap = {
  MESSAGE_RETENTION_SECONDS: Joi.number()
    .integer()
    .min(60)
    .default(7 * 24 * 3600),
  ...mediaEnv,
};

export interface StoreConfig {
  messageRetentionSeconds: number;
  /** The media store (docs/media.md). */
  media: MediaConfig;
}

export function storeConfig(e: Env): StoreConfig {
  return { messageRetentionSeconds: e.MESSAGE_RETENTION_SECONDS, media: mediaConfig(e) };
}
