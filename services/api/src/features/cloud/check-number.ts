import { GraphError, GraphUnreachableError, graphVerdict, type GraphClient } from '@mgw/cloud';
import type { CloudDeviceConfig, CloudDeviceInput, CloudNumberProfile } from '@mgw/contracts';
import { DEFAULT_GRAPH_VERSION } from '@mgw/contracts';

/** The one Graph call the API makes: what the number says of itself (GraphClient.phoneNumber). */
export type NumberGraph = Pick<GraphClient, 'phoneNumber'>;

/** Meta said no: the request reached it and it refused these credentials (or this number id). */
export interface GraphRefused {
  ok: false;
  reason: 'graph_refused';
  /** Meta's error code, subcode and message (the token never in it). */
  code: number;
  subcode?: number;
  message: string;
  /** The field Meta's refusal is about, when its code says: the token, or the id the call named. */
  field?: 'accessToken' | 'phoneNumberId' | 'wabaId';
  /** Why the device is disconnected after it (FAILURE_REASONS: cloud_token_expired, …). */
  deviceReason: string;
}

/** Meta could not be reached, or failed (5xx, throttled): nothing is known of the credentials. */
export interface GraphUnreachable {
  ok: false;
  reason: 'graph_unreachable';
}

export type NumberCheck = { ok: true; profile: CloudNumberProfile } | GraphRefused | GraphUnreachable;

/** Meta's codes that are about the token (190 expired/invalid, 104 none, 10 and 200–299 permissions). */
const TOKEN_CODES = new Set([104, 190, 10]);

/**
 * Asks the Graph API what the number is, with the credentials given: the check PUT /cloud makes
 * before it stores them (nobody claims a number whose token they do not hold) and /connect makes
 * again. A refusal says what Meta said, with the token taken out should Meta have quoted it.
 */
export async function checkNumber(
  graph: NumberGraph,
  n: Pick<CloudDeviceInput | CloudDeviceConfig, 'phoneNumberId' | 'wabaId' | 'accessToken' | 'graphVersion'>,
  now = new Date(),
): Promise<NumberCheck> {
  try {
    const profile = await graph.phoneNumber(
      {
        phoneNumberId: n.phoneNumberId,
        wabaId: n.wabaId,
        accessToken: n.accessToken,
        graphVersion: n.graphVersion ?? DEFAULT_GRAPH_VERSION,
      },
      now,
    );
    return { ok: true, profile };
  } catch (err) {
    return graphFailure(err, n.accessToken);
  }
}

/**
 * What a failed Graph call says of the device's credentials: refused by Meta (what it said, the
 * token taken out should Meta have quoted it), or nothing (unreachable, throttled, Meta's passing
 * failure). `node` is the id the call named (Meta's code 100 is about it). Rethrows what is no
 * Graph failure (a bug of ours).
 */
export function graphFailure(
  err: unknown,
  accessToken: string,
  node: 'phoneNumberId' | 'wabaId' = 'phoneNumberId',
): GraphRefused | GraphUnreachable {
  if (err instanceof GraphUnreachableError) return { ok: false, reason: 'graph_unreachable' };
  if (!(err instanceof GraphError)) throw err;
  const verdict = graphVerdict(err);
  // Meta's passing failures and throttling say nothing of the credentials: try again later.
  if (verdict.retry) return { ok: false, reason: 'graph_unreachable' };
  const field =
    TOKEN_CODES.has(err.code) || (err.code >= 200 && err.code <= 299) || err.status === 401
      ? 'accessToken'
      : err.code === 100
        ? node
        : undefined;
  return {
    ok: false,
    reason: 'graph_refused',
    code: err.code,
    ...(err.subcode !== undefined ? { subcode: err.subcode } : {}),
    message: redact(err.details ? `${err.message} (${err.details})` : err.message, accessToken),
    ...(field ? { field } : {}),
    deviceReason: verdict.reason,
  };
}

/** Meta's words without the secret, should they quote it. */
function redact(text: string, secret: string): string {
  return secret.length > 0 ? text.split(secret).join('[access token]') : text;
}
