import { randomUUID } from 'node:crypto';
import { PROFILE_LIMITS, keys, photoTypeOf, type ProfilePhotoBody } from '@mgw/contracts';
import { storageContext } from '@mgw/store';
import type { HolderOutcome } from '../holder/index.js';
import { askProfile, type AccountDeps, type ProfileData } from './account-deps.js';

/**
 * The largest request a photo comes in: its base64 (PROFILE_LIMITS.photoBytes decoded) and the JSON
 * around it; both surfaces' PUT …/profile/photo bodies are bounded by it.
 */
export const PHOTO_BODY_LIMIT_BYTES = Math.ceil(PROFILE_LIMITS.photoBytes / 3) * 4 + 4 * 1024;

/** How long a photo waits in Redis for the holder to take it. */
export const PHOTO_HANDOFF_SECONDS = 60;

/** Why a photo given as base64 is refused before the holder is asked. */
export type PhotoRefusal =
  /** Over PROFILE_LIMITS.photoBytes once decoded. */
  | { ok: false; reason: 'photo_too_large' }
  /** Its bytes are no JPEG or PNG. */
  | { ok: false; reason: 'photo_not_image' };

/**
 * PUT /profile/photo: the account's photo from a URL (the holder fetches it, through the guarded
 * outbound client and the device's proxy) or from base64 bytes, checked here first. The bytes go
 * by reference (sealed under the command's id, short-lived), not in the command every sender
 * hears; they are put once the session check passed and taken away once the ask is over.
 */
export async function setPhoto(
  deps: Pick<AccountDeps, 'holder' | 'redis' | 'encryption'>,
  deviceId: string,
  photo: ProfilePhotoBody,
): Promise<HolderOutcome<ProfileData> | PhotoRefusal> {
  if (photo.url !== undefined)
    return askProfile(deps, deviceId, { type: 'account-photo-set', source: { url: photo.url } });
  const bytes = Buffer.from(photo.base64!, 'base64');
  if (bytes.length > PROFILE_LIMITS.photoBytes) return { ok: false, reason: 'photo_too_large' };
  if (!photoTypeOf(bytes)) return { ok: false, reason: 'photo_not_image' };
  const requestId = randomUUID();
  const key = keys.profilePhoto(deviceId, requestId);
  const handoff = {
    put: () =>
      deps.redis.set(
        key,
        deps.encryption.seal(bytes, storageContext(key, 'photo')),
        'EX',
        PHOTO_HANDOFF_SECONDS,
      ),
    remove: () => deps.redis.del(key).catch(() => undefined),
  };
  return askProfile(
    deps,
    deviceId,
    { type: 'account-photo-set', source: { stored: true } },
    { requestId, handoff },
  );
}
