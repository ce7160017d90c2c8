import type { RedisClient } from '@mgw/common';
import { GraphError } from '@mgw/cloud';
import {
  CLOUD_WINDOW_MS,
  CLOUD_OTP_LANGUAGES,
  keys,
  otpTemplateComponents,
  phoneOf,
  type CloudDeviceConfig,
  type OtpLanguage,
  type SendBody,
  type TemplateInput,
} from '@mgw/contracts';
import type { CloudDeviceStore } from '@mgw/store';
import { isRefusal, type Refusal } from '../../enqueue/refusal.js';
import type { EngineCache } from './engine-cache.js';
import type { CatalogEntry, TemplateCatalog } from './template-catalog.js';
import { templateRefusal } from './template-check.js';

/** What the Cloud API's rules at accept time read (docs/cloud-api.md). */
export interface CloudSendDeps {
  redis: RedisClient;
  engines: Pick<EngineCache, 'engineOf' | 'drop'>;
  cloudDevices: Pick<CloudDeviceStore, 'get'>;
  templates: Pick<TemplateCatalog, 'named'>;
  /** The API's logger (its `warn`). */
  logger: { warn(message: string, fields: Record<string, unknown>): unknown };
}

/**
 * The Cloud API's rules a /send must meet before it is accepted (docs/cloud-api.md), or why it
 * does not:
 * - a template goes through a cloud device only, and must be one of its WABA's, approved, in that
 *   language, with its parameters (read from the device's configuration, never from a cache);
 * - a free-form message (anything else) to a single recipient of a cloud device goes only inside
 *   the contact's 24-hour window (`keys.cloudWindows`: the time of its last message). A list is
 *   accepted whole: the sender fails the messages of its closed windows one by one
 *   (`window_closed`), as it does a list's opted-out and blocked recipients — and judges every
 *   window again when it sends (a scheduled message, a window that closed while queued).
 * A linked device's free-form send costs nothing here once its engine is known: the answer is
 * undefined, not a promise.
 */
export function cloudSendRefusal(
  deps: CloudSendDeps,
  deviceId: string,
  /** The /send body (its `to` already resolved: usernames are LIDs), read as it is: nothing is copied. */
  send: Pick<SendBody, 'template' | 'to'>,
  now = Date.now(),
): Refusal | undefined | Promise<Refusal | undefined> {
  if (send.template) return templateCheck(deps, deviceId, send.template);
  if (Array.isArray(send.to)) return undefined;
  const engine = deps.engines.engineOf(deviceId, now);
  if (engine === 'linked') return undefined;
  const recipient = phoneOf(send.to);
  return (async () => {
    if ((await engine) === 'linked') return undefined;
    return (await windowOpen(deps.redis, deviceId, recipient, now))
      ? undefined
      : { kind: 'refused', reason: 'window_closed', recipient };
  })();
}

/** Whether the contact wrote to the number within the last 24 hours. */
async function windowOpen(
  redis: RedisClient,
  deviceId: string,
  contact: string,
  now: number,
): Promise<boolean> {
  const lastMessage = await redis.zscore(keys.cloudWindows(deviceId), contact);
  return lastMessage !== null && now - Number(lastMessage) < CLOUD_WINDOW_MS;
}

/**
 * The number's templates of this name, or the refusal of a list the Graph API did not give (its
 * failure logged for the operator: Meta's code and trace id, never the token).
 */
async function namedOrRefusal(
  deps: CloudSendDeps,
  deviceId: string,
  config: CloudDeviceConfig,
  name: string,
): Promise<CatalogEntry[] | Refusal> {
  try {
    return await deps.templates.named(deviceId, config, name);
  } catch (err) {
    deps.logger.warn("cloud: the number's templates could not be read from the Graph API", {
      deviceId,
      ...(err instanceof GraphError
        ? { status: err.status, code: err.code, subcode: err.subcode, fbtraceId: err.fbtraceId }
        : { error: (err as Error).message }),
    });
    return { kind: 'refused', reason: 'template_catalog_unavailable' };
  }
}

async function templateCheck(
  deps: CloudSendDeps,
  deviceId: string,
  template: TemplateInput,
): Promise<Refusal | undefined> {
  const config = await deps.cloudDevices.get(deviceId);
  if (!config) return { kind: 'refused', reason: 'template_on_linked_device' };
  const named = await namedOrRefusal(deps, deviceId, config, template.name);
  return isRefusal(named) ? named : templateRefusal(template, named);
}

/**
 * An OTP on a cloud device: the device's authentication template (`otpTemplate`) in the request's
 * language — English as `en_US`, else `en` when that is what the WABA has; Arabic as `ar` — with
 * the code as the body's parameter and the copy-code button's. Undefined for a linked device (it
 * sends the text); a refusal when the WABA has no approved such template in that language.
 */
export async function cloudOtpTemplate(
  deps: CloudSendDeps,
  deviceId: string,
  code: string,
  language: OtpLanguage,
): Promise<TemplateInput | Refusal | undefined> {
  if ((await deps.engines.engineOf(deviceId)) === 'linked') return undefined;
  const config = await deps.cloudDevices.get(deviceId);
  // The device stopped being a cloud device since its engine was read: it sends the text.
  if (!config) return undefined;
  const named = await namedOrRefusal(deps, deviceId, config, config.otpTemplate);
  if (isRefusal(named)) return named;
  const codes = CLOUD_OTP_LANGUAGES[language];
  const approved = codes.find((c) => named.some((t) => t.language === c && t.status === 'APPROVED'));
  const template = {
    name: config.otpTemplate,
    // The first language it has (approved or not), so that the refusal says why.
    language: approved ?? codes.find((c) => named.some((t) => t.language === c)) ?? codes[0]!,
    components: otpTemplateComponents(code),
  };
  return templateRefusal(template, named) ?? template;
}
