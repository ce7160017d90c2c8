import { serializeError } from '@mgw/common';
import {
  keys,
  passkeyCommandContext,
  type ConnectionCommand,
  type DeviceCommandReply,
  type PasskeyAssertion,
} from '@mgw/contracts';
import { PasskeyInputError, PasskeyStepError } from '@mgw/messenger';
import type { LocalPairing, PairingDeps } from './pairing-start.js';

/** An answer nobody takes (the API gave up) is dropped after this long. */
const REPLY_TTL_SECONDS = 60;

/**
 * Errors of a passkey command's reply (`DeviceCommandReply.error`), as the API maps them:
 * `invalid:<why>` (400), `wrong_step` (409), `rejected` (WhatsApp refused the assertion: the link
 * ended), `failed`.
 */
export type PasskeyReplyError = `invalid:${string}` | 'wrong_step' | 'rejected' | 'failed';

/**
 * Does a passkey command for this replica's pairing (docs/passkeys.md) and answers it on
 * `keys.commandReply(requestId)`: the assertion (sealed in the command) goes to WhatsApp, or the
 * operator's confirmation of the code finishes the link.
 */
export async function answerPasskey(
  deps: Pick<PairingDeps, 'redis' | 'encryption' | 'logger'>,
  pairing: LocalPairing,
  cmd: Exclude<ConnectionCommand, { type: 'cancel-pairing' }>,
): Promise<void> {
  let answer: DeviceCommandReply;
  try {
    if (cmd.type === 'passkey-assertion') {
      const assertion = JSON.parse(
        deps.encryption.openText(cmd.sealed, passkeyCommandContext(cmd.requestId)),
      ) as PasskeyAssertion;
      answer = (await pairing.session.submitPasskey(assertion))
        ? { ok: true }
        : { ok: false, error: 'rejected' satisfies PasskeyReplyError };
    } else {
      await pairing.session.confirmPasskey(cmd.code);
      answer = { ok: true };
    }
  } catch (err) {
    if (err instanceof PasskeyInputError) answer = { ok: false, error: `invalid:${err.message}` };
    else if (err instanceof PasskeyStepError) answer = { ok: false, error: 'wrong_step' };
    else {
      deps.logger.warn('passkey command failed', { deviceId: cmd.deviceId, err: serializeError(err) });
      answer = { ok: false, error: 'failed' };
    }
  }
  const key = keys.commandReply(cmd.requestId);
  await deps.redis
    .multi()
    .rpush(key, JSON.stringify(answer))
    .expire(key, REPLY_TTL_SECONDS)
    .exec()
    .catch((err: unknown) =>
      deps.logger.warn('passkey command not answered', { deviceId: cmd.deviceId, err: serializeError(err) }),
    );
}
