import { ERRORS, VARS_LIMITS, emptyQuerySchema, sendBodySchema } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import type { ApiConfig } from '../../config.js';
import { sendOperations, sendSchemas } from './openapi.js';
import type { RequestHandler } from 'express';
import type { Uses } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { idempotencyScope } from '../../http/route-helpers.js';
import { ContactUsernames } from '@mgw/store';
import { usernameLookupDeps } from '../contacts/index.js';
import { sendMessage, type SendDeps, type SendOutcome } from './send-message.js';
import { usernameRecipientDeps } from './username-recipients.js';
import { sendThroughPool } from '../pools/index.js';
import { OutcomeUnknownError, type Outcome } from '../../http/idempotency.js';
import { refusalError } from '../../http/refusal-error.js';
import type { SendRateLimit } from '../../http/send-rate-limit.js';
import { parse, parseSendBody } from '../../http/validation.js';
import { respond } from '../../http/respond.js';

/**
 * A 10 MB attachment is ~13.4 MiB of base64; with the JSON around it 15 MB is enough, and
 * anything larger is refused with 413 before it is buffered.
 */
export const SEND_BODY_LIMIT_BYTES = 15 * 1024 * 1024;

/** A /send body: a recipient list of up to MAX_RECIPIENTS, each with up to VARS_LIMITS.count variables. */
const sendBody = (config: ApiConfig): BodySpec => ({
  json: {
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    maxValues: config.maxRecipients + FIELD_ALLOWANCE,
    lists: { to: config.maxRecipients },
    // A personalised entry of `to`: its number and up to VARS_LIMITS.count variables.
    listItemValues: VARS_LIMITS.count + 1,
  },
});

/**
 * Sending (docs/api.md): one recipient or a list, through a device or a pool. Its hits are counted
 * by the accept script's calls that write its messages (`limit: 'send'`, http/send-rate-limit.ts).
 */
export const send = feature({
  name: 'send',
  routes: [
    { method: 'post', path: '/send', limit: 'send', body: sendBody, pool: true, handler: 'send', hot: true },
  ],
  handlers: (s, { sendLimit }) => ({ send: sendRoute(s, sendLimit) }),
  operations: sendOperations,
  schemas: sendSchemas,
});

/**
 * A /send's outcome as its answer: 202 with the messageId (a list: its batch id and messageIds),
 * 200 for a queued message deleted; a refusal is thrown (its status and error, refusal-error.ts).
 */
export function sendAnswer(outcome: SendOutcome): Outcome {
  switch (outcome.kind) {
    case 'accepted':
      return { status: 202, body: { success: true, messageId: outcome.messageId } };
    case 'list_accepted':
      return {
        status: 202,
        body: { success: true, messageId: outcome.batchId, messageIds: outcome.messageIds },
      };
    case 'deleted':
      return { status: 200, body: { success: true, messageId: outcome.messageId, status: 'deleted' } };
    case 'unknown': {
      const { kind: _, ...ids } = outcome;
      throw new OutcomeUnknownError(ids);
    }
    case 'refused':
      throw refusalError(outcome);
  }
}

/** What POST /send uses of the services: the send's, a pool's, a username lookup's, and its own. */
type SendServices = Omit<SendDeps, 'usernames'> &
  Parameters<typeof sendThroughPool>[0] &
  Parameters<typeof usernameLookupDeps>[0] &
  Uses<'config' | 'redis' | 'idempotency'>;

/** POST /send */
function sendRoute(s: SendServices, limit: SendRateLimit): RequestHandler {
  const schema = sendBodySchema(s.config.maxRecipients);
  // `to` may name usernames (`@alice.shop`), resolved on the device (username-recipients.ts).
  const deps: SendDeps = {
    ...s,
    usernames: usernameRecipientDeps(usernameLookupDeps(s), new ContactUsernames(s.redis)),
  };
  return async (req, res) => {
    const auth = authOf(res);
    // Almost every /send has no query at all: nothing for joi to judge.
    if (req.url.includes('?')) parse(emptyQuerySchema, req.query);
    const body = parseSendBody(schema, req.body ?? {}, s.config.maxRecipients);
    const hit = limit.hitOf(res);
    // An edit or delete does not hand its hit to the accept script: its hit is counted (and
    // refused over the limit) first, so the limit stays exact for it too.
    // So is a pool token's: its parts are accepted per device, its count is the pool's.
    if (body.edit || body.delete || auth.poolId) await limit.settle(res, hit);
    // A refusal is thrown inside the idempotent work: its key is freed, not kept as an outcome.
    // A pool's parts go to devices chosen per run: its ids are not the key's (docs/pools.md).
    const outcome = await s.idempotency.run(req, idempotencyScope(res, auth.deviceId), async ({ seed }) =>
      sendAnswer(
        auth.poolId
          ? await sendThroughPool(s, auth.poolId, body)
          : await sendMessage(deps, auth.deviceId, body, hit, seed),
      ),
    );
    // Counted by the accept script that wrote the messages; a replay is counted now.
    await limit.settle(res, hit, !outcome.replayed);
    respond(res, outcome);
  };
}
