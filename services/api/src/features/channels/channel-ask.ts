import { randomUUID } from 'node:crypto';
import { keys, type Channel, type ChannelCommand, type ChannelCommandResult } from '@mgw/contracts';
import { storageContext, type ChannelList } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import {
  askHolder,
  type DeviceHolder,
  type HolderOutcome,
  type Unaddressed,
  type HolderFailure,
} from '../holder/index.js';

/**
 * Asking the device's holder about a channel, and the device's list of channels kept in step with
 * what it answers: WhatsApp has no query for the channels an account created or follows, so the
 * gateway keeps the ones it learnt through these asks (`ChannelList`).
 */

/** A channel picture waits this long for the holder to take it (a little over HOLDER_WAIT_SECONDS). */
const PICTURE_HANDOFF_SECONDS = 60;

/** What every channel use case needs: the holder, the device's list, and where a picture waits (sealed). */
export interface ChannelDeps extends Pick<ApiServices, 'redis' | 'encryption'> {
  holder: DeviceHolder;
  known: ChannelList;
}

/** Why an ask got no answer (the holder's outcome, each channel use case passes it on). */
export type { HolderFailure };

/**
 * Asks the holder to do `command`, with `picture` handed over by reference. A channel the holder
 * says is gone for everyone (deleted by its owner) leaves the device's list.
 */
export async function askChannel(
  deps: ChannelDeps,
  deviceId: string,
  command: Unaddressed<ChannelCommand>,
  picture?: Buffer,
): Promise<HolderOutcome<ChannelCommandResult>> {
  const requestId = randomUUID();
  // The picture goes by reference (sealed, short-lived), not in the command every sender hears.
  const key = keys.profilePhoto(deviceId, requestId);
  const handoff = picture && {
    put: () =>
      deps.redis.set(
        key,
        deps.encryption.seal(picture, storageContext(key, 'photo')),
        'EX',
        PICTURE_HANDOFF_SECONDS,
      ),
    remove: () => deps.redis.del(key).catch(() => undefined),
  };
  const outcome = await askHolder<ChannelCommandResult>(deps.holder, deviceId, command, {
    requestId,
    handoff,
  });
  const gone = !outcome.ok && outcome.reason === 'failed' && outcome.code === 'not-found';
  if (gone && 'key' in command && command.key.kind === 'jid')
    await deps.known.forget(deviceId, command.key.id);
  return outcome;
}

/**
 * Asks the holder as `askChannel` does and keeps the device's list in step with the channel it
 * answers (owned, administered or followed: listed; anything else: not).
 */
export async function askAndNote(
  deps: ChannelDeps,
  deviceId: string,
  command: Unaddressed<ChannelCommand>,
  picture?: Buffer,
): Promise<HolderOutcome<{ channel: Channel }>> {
  const outcome = await askChannel(deps, deviceId, command, picture);
  if (!outcome.ok) return outcome;
  const { channel } = outcome.data;
  await note(deps, deviceId, channel);
  return { ok: true, data: { channel } };
}

/** Keeps the device's list in step with what WhatsApp said of one of its channels. */
async function note(deps: ChannelDeps, deviceId: string, channel: Channel): Promise<void> {
  if (channel.role === 'owner' || channel.role === 'admin' || channel.role === 'follower')
    await deps.known.remember(deviceId, {
      id: channel.id,
      name: channel.name,
      role: channel.role === 'follower' ? 'follower' : 'owner',
    });
  else await deps.known.forget(deviceId, channel.id);
}
