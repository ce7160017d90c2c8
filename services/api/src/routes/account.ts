import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { Joi } from '@mgw/contracts';
import {
  ACCOUNT_COMMAND_ERRORS,
  ACCOUNT_ERRORS,
  ERRORS,
  PROFILE_LIMITS,
  blockBodySchema,
  contactAddressSchema,
  keys,
  photoTypeOf,
  presenceBodySchema,
  profileBodySchema,
  profilePhotoBodySchema,
  type AccountCommand,
  type AccountCommandResult,
} from '@mgw/contracts';
import { Blocklist, ContactCache, ContactLookupCap, DeviceCommandClient, storageContext } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { askHolder, type Unaddressed } from '../features/holder/ask-holder.js';
import { ApiError } from '../http/api-error.js';
import { authOf } from '../http/auth.js';
import { NO_DEVICE, answer, invalidAt, type HolderErrors } from '../http/holder-errors.js';
import { noQuery } from '../http/route-helpers.js';
import { parse } from '../http/validation.js';

/** How long a photo waits in Redis for the holder to take it. */
const PHOTO_HANDOFF_SECONDS = 60;

type Ask = Unaddressed<AccountCommand>;

/**
 * How an account ask fails in HTTP (it waits the default: one to three WhatsApp queries, or a
 * photo upload). A photo that is no image names the field it came in (`url` or `base64`).
 */
function accountHolderErrors(command: Ask): HolderErrors {
  return {
    no_device: NO_DEVICE,
    timeout: { status: 504, error: ACCOUNT_ERRORS.timeout },
    not_connected: NO_DEVICE,
    failed: { status: 502, error: ACCOUNT_ERRORS.failed },
    codes: {
      [ACCOUNT_COMMAND_ERRORS.notFound]: { status: 404, error: ACCOUNT_ERRORS.contactNotFound },
      [ACCOUNT_COMMAND_ERRORS.photoNotImage]: invalidAt(photoField(command), ACCOUNT_ERRORS.photoNotImage),
      [ACCOUNT_COMMAND_ERRORS.photoTooLarge]: { status: 413, error: ACCOUNT_ERRORS.photoTooLarge },
      [ACCOUNT_COMMAND_ERRORS.photoUnreachable]: {
        status: 422,
        error: ACCOUNT_ERRORS.photoUnreachable,
        details: [{ path: ['url'], message: ACCOUNT_ERRORS.photoUnreachable }],
      },
      [ACCOUNT_COMMAND_ERRORS.noName]: { status: 409, error: ACCOUNT_ERRORS.presenceNeedsName },
    },
  };
}

const numberParams = Joi.object({ number: contactAddressSchema });

/**
 * The account routes (docs/account.md): the profile (name, about, photo), presence, a contact's
 * profile and presence, and the blocklist. What needs the WhatsApp socket is asked of the sender
 * holding the device (a device command, one round trip to it and on to WhatsApp); the blocklist
 * is read from Redis (kept there by that sender), as GET /status reads the session.
 */
export function accountRoutes(
  s: ApiServices,
  /** The device a request acts on: the token's (public API), or the path's (admin API). */
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
) {
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis), sessions: s.sessions };
  const blocklist = new Blocklist(s.redis);
  const cache = new ContactCache(s.redis);
  const lookups = new ContactLookupCap(s.redis, s.config.contactCheck.lookupsPerDay);

  async function connected(deviceId: string): Promise<void> {
    if ((await s.sessions.get(deviceId)).status !== 'connected') throw new ApiError(409, ERRORS.noDevice);
  }

  const ask = async (deviceId: string, command: Ask, requestId?: string): Promise<AccountCommandResult> =>
    answer(
      await askHolder<AccountCommandResult>(holder, deviceId, command, { requestId }),
      accountHolderErrors(command),
    );

  /**
   * Account protection for the routes that reach another person (their profile, presence, a
   * block): a number the device's contact cache does not know costs one lookup at WhatsApp, counted
   * against the number check's daily cap (CONTACT_LOOKUPS_PER_DAY), so these routes are no way
   * around it to probe numbers.
   */
  async function contactOf(deviceId: string, address: string): Promise<string> {
    if (address.endsWith('@lid')) return address;
    if ((await cache.getMany(deviceId, [address])).size > 0) return address;
    const allowance = await lookups.take(deviceId, 1);
    if (!allowance.granted) {
      s.metrics.contactLookups.inc({ outcome: 'capped' });
      throw new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: allowance.resetInSeconds });
    }
    s.metrics.contactLookups.inc({ outcome: 'looked_up' });
    return address;
  }

  const numberOf = (req: Request) => parse(numberParams, { number: req.params.number }).number as string;
  const ok = (res: Response, data: unknown) => res.status(200).json({ success: true, data });
  const profileAnswer = async (req: Request, res: Response, command: Ask, requestId?: string) => {
    const data = await ask(deviceOf(req, res), command, requestId);
    ok(res, { profile: (data as { profile: unknown }).profile });
  };

  const getProfile: RequestHandler = async (req, res) => {
    noQuery(req);
    await profileAnswer(req, res, { type: 'account-profile-get' });
  };
  const patchProfile: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(profileBodySchema, req.body ?? {});
    await profileAnswer(req, res, {
      type: 'account-profile-set',
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.about !== undefined ? { about: body.about } : {}),
    });
  };
  const putPhoto: RequestHandler = async (req, res) => {
    noQuery(req);
    const body = parse(profilePhotoBodySchema, req.body ?? {});
    const deviceId = deviceOf(req, res);
    if (body.url !== undefined)
      return profileAnswer(req, res, { type: 'account-photo-set', source: { url: body.url } });
    const bytes = Buffer.from(body.base64!, 'base64');
    if (bytes.length > PROFILE_LIMITS.photoBytes) throw new ApiError(413, ACCOUNT_ERRORS.photoTooLarge);
    if (!photoTypeOf(bytes))
      throw ApiError.invalid([{ path: ['base64'], message: ACCOUNT_ERRORS.photoNotImage }]);
    await connected(deviceId);
    // The bytes go by reference (sealed, short-lived), not in the command every sender hears.
    const requestId = randomUUID();
    const key = keys.profilePhoto(deviceId, requestId);
    await s.redis.set(
      key,
      s.encryption.seal(bytes, storageContext(key, 'photo')),
      'EX',
      PHOTO_HANDOFF_SECONDS,
    );
    try {
      await profileAnswer(req, res, { type: 'account-photo-set', source: { stored: true } }, requestId);
    } finally {
      await s.redis.del(key).catch(() => undefined);
    }
  };
  const deletePhoto: RequestHandler = async (req, res) => {
    noQuery(req);
    await profileAnswer(req, res, { type: 'account-photo-remove' });
  };
  const contactProfile: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    const address = await contactOf(deviceId, numberOf(req));
    const data = await ask(deviceId, { type: 'account-contact-profile', address });
    ok(res, { profile: (data as { contactProfile: unknown }).contactProfile });
  };
  const putPresence: RequestHandler = async (req, res) => {
    noQuery(req);
    const { presence } = parse(presenceBodySchema, req.body ?? {});
    ok(res, await ask(deviceOf(req, res), { type: 'account-presence-set', presence }));
  };
  const subscribePresence: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    const address = await contactOf(deviceId, numberOf(req));
    ok(res, await ask(deviceId, { type: 'account-presence-subscribe', address }));
  };
  const getBlocklist: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    // From Redis, like GET /status: the holder keeps the set current (no WhatsApp query here).
    const session = await s.sessions.get(deviceId);
    if (session.status === 'disconnected') throw new ApiError(409, ERRORS.noDevice);
    const contacts = await blocklist.list(deviceId);
    ok(res, { total: contacts.length, contacts });
  };
  const block: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    const { phone } = parse(blockBodySchema, req.body ?? {});
    const address = await contactOf(deviceId, phone);
    ok(res, await ask(deviceId, { type: 'account-block', address, action: 'block' }));
  };
  const unblock: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    const address = await contactOf(deviceId, numberOf(req));
    ok(res, await ask(deviceId, { type: 'account-block', address, action: 'unblock' }));
  };
  return {
    getProfile,
    patchProfile,
    putPhoto,
    deletePhoto,
    contactProfile,
    putPresence,
    subscribePresence,
    getBlocklist,
    block,
    unblock,
  };
}

function photoField(command: Ask): string {
  return command.type === 'account-photo-set' && 'url' in command.source ? 'url' : 'base64';
}
