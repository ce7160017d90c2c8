import {
  getBinaryNodeChild,
  QueryIds,
  S_WHATSAPP_NET,
  XWAPaths,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { SimUser } from './directory.js';
import type { SimLogger } from './logger.js';
import type { Reachout } from './reachout.js';
import type { DeliveryContext, DirectoryContext } from './sim-context.js';
import { bytesOf, iqResult, newStanzaId, node, unixSeconds } from './stanza.js';
import { newsletterMex, type SimNewsletters } from './newsletters.js';
import { SimError } from './sim-error.js';
import { textStatusMutation, UPDATE_TEXT_STATUS_QUERY } from './text-status.js';

/** What the `w:mex` queries and notifications need of the simulator. */
export interface MexContext extends DirectoryContext, DeliveryContext {
  readonly logger: SimLogger;
  readonly newsletters: SimNewsletters;
  readonly reachout: Reachout;
}

/** Baileys' `handleMexNotification` dispatches on these `op_name`s. */
export const TIMELOCK_OP = 'NotificationUserReachoutTimelockUpdate';
export const CAPPING_OP = 'MessageCappingInfoNotification';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/** The GraphQL shape both the timelock query and its notification carry. */
function timelockPayload(sim: MexContext, phone: string) {
  const lock = sim.reachout.lock(phone);
  return lock
    ? {
        is_active: true,
        time_enforcement_ends: String(Math.ceil(lock.until / 1000)),
        enforcement_type: lock.enforcementType,
      }
    : { is_active: false, time_enforcement_ends: '0', enforcement_type: 'DEFAULT' };
}

/** Server push of a GraphQL update: `<notification type=mex><update op_name>{json}</update>`. */
function mexNotification(opName: string, data: Record<string, unknown>): BinaryNode {
  return node('notification', { from: S_WHATSAPP_NET, type: 'mex', id: newStanzaId(), t: unixSeconds() }, [
    node('update', { op_name: opName }, json({ data })),
  ]);
}

function notifyDevices(sim: MexContext, account: SimUser, build: () => BinaryNode): void {
  for (const device of account.devices.values()) sim.deliverToDevice(device, build());
}

/** Baileys turns this into `connection.update` with `reachoutTimeLock` (also when lifted). */
export function notifyTimelock(sim: MexContext, phone: string): void {
  const account = sim.directory.get(phone);
  if (!account) return;
  const payload = timelockPayload(sim, phone);
  notifyDevices(sim, account, () =>
    mexNotification(TIMELOCK_OP, { xwa2_notify_account_reachout_timelock: payload }),
  );
}

/** Baileys emits the payload as it is on `message-capping.update`. */
export function notifyCapping(sim: MexContext, phone: string): void {
  const account = sim.directory.get(phone);
  if (!account) return;
  const payload = sim.reachout.capInfo(phone);
  notifyDevices(sim, account, () =>
    mexNotification(CAPPING_OP, { xwa2_notify_new_chat_messages_capping_info_update: payload }),
  );
}

/** A channel query's answer (its data, or its refusal as a GraphQL error); undefined for other queries. */
function newsletterBody(
  sim: MexContext,
  phone: string,
  queryId: string | undefined,
  iq: BinaryNode,
): unknown {
  let variables: Record<string, unknown> = {};
  try {
    const raw = bytesOf(getBinaryNodeChild(iq, 'query'))?.toString('utf8') ?? '{}';
    variables = ((JSON.parse(raw) as { variables?: Record<string, unknown> }).variables ?? {}) as Record<
      string,
      unknown
    >;
  } catch {
    return { errors: [{ message: 'query variables are not JSON', extensions: { error_code: 400 } }] };
  }
  try {
    const data = newsletterMex(sim.newsletters, phone, queryId, variables);
    return data === undefined ? undefined : { data };
  } catch (err) {
    const status = err instanceof SimError ? err.status : 500;
    return { errors: [{ message: (err as Error).message, extensions: { error_code: status } }] };
  }
}

/**
 * `w:mex` GraphQL queries by persisted query id; the answer is `<result>{json}</result>`.
 * Unknown ids get a GraphQL error, which Baileys throws as a Boom.
 */
export function handleMexIq(sim: MexContext, conn: ClientConnection, iq: BinaryNode): void {
  const queryId = getBinaryNodeChild(iq, 'query')?.attrs.query_id;
  const phone = conn.account?.phone ?? '';
  let body: unknown;
  if (queryId === QueryIds.REACHOUT_TIMELOCK) {
    body = { data: { [XWAPaths.xwa2_fetch_account_reachout_timelock]: timelockPayload(sim, phone) } };
  } else if (queryId === QueryIds.MESSAGE_CAPPING_INFO) {
    body = { data: { [XWAPaths.xwa2_message_capping_info]: sim.reachout.capInfo(phone) } };
  } else if (queryId === UPDATE_TEXT_STATUS_QUERY) {
    body = textStatusMutation(conn.account, iq);
  } else if ((body = newsletterBody(sim, phone, queryId, iq)) !== undefined) {
    // a channel query (newsletters.ts)
  } else {
    sim.logger.debug({ queryId }, 'unsupported mex query');
    body = {
      errors: [{ message: `query ${queryId ?? '?'} is not simulated`, extensions: { error_code: 400 } }],
    };
  }
  conn.send(iqResult(iq, [node('result', {}, json(body))]));
}
