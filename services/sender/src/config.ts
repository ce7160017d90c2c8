import Joi from 'joi';
import { outboundConfig, outboundEnv, validateEnv, type OutboundConfig } from '@mgw/common';
import {
  MESSENGER_SERVICE_ENV,
  messengerRules,
  messengerServiceConfig,
  type MessengerServiceConfig,
} from '@mgw/messenger';

const senderEnv: Joi.PartialSchemaMap = {
  SEND_MIN_GAP_MS: Joi.number().integer().min(0).default(1000),
  SEND_GAP_JITTER_MS: Joi.number().integer().min(0).default(500),
  MEDIA_FETCH_TIMEOUT_MS: Joi.number().integer().min(100).default(20_000),
  LEASE_SCAN_MS: Joi.number().integer().min(200).default(3000),
};

export interface SenderConfig extends MessengerServiceConfig {
  /** How often unowned linked devices are looked for (with jitter). */
  leaseScanMs: number;
  /** Minimum gap between two messages of one device (0 disables pacing). */
  sendMinGapMs: number;
  sendGapJitterMs: number;
  mediaFetchTimeoutMs: number;
  /** Which private hosts attachment URLs may point at (none by default). */
  outbound: OutboundConfig;
}

/** Every environment variable this service reads, by schema piece. */
export const SENDER_ENV = [...MESSENGER_SERVICE_ENV, outboundEnv, senderEnv];

export function loadSenderConfig(env: NodeJS.ProcessEnv = process.env): SenderConfig {
  const e = validateEnv(SENDER_ENV, env, messengerRules);
  return {
    ...messengerServiceConfig(e),
    leaseScanMs: e.LEASE_SCAN_MS,
    sendMinGapMs: e.SEND_MIN_GAP_MS,
    sendGapJitterMs: e.SEND_GAP_JITTER_MS,
    mediaFetchTimeoutMs: e.MEDIA_FETCH_TIMEOUT_MS,
    outbound: outboundConfig(e),
  };
}
