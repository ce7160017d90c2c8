import { PASSKEY_GATES, type PasskeyFaults, type PasskeyGate, type Passkeys } from './passkey.js';
import { parsePasskeyPublicKey } from './passkey-webauthn.js';
import { SimError } from './sim-error.js';

/** What the passkey routes need of the simulator. */
export interface PasskeyApiContext {
  readonly passkeys: Passkeys;
}

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

/** The longest delay a Node timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const FAULT_SWITCHES = [
  'rejectAssertion',
  'withholdContinuation',
  'omitOptions',
  'codeWithoutWrappedKey',
] as const;

/**
 * The control API of the passkey gate on linking (passkey.ts), per account; every route answers
 * the account's passkey view (`GET /accounts/:phone/passkey`):
 *
 * - `POST /accounts/:phone/passkey/gate` `{ gate: "none" | "qr" | "code" | "both" }`;
 *   `DELETE /accounts/:phone/passkey/gate`: back to `none`;
 * - `POST /accounts/:phone/passkey/authenticator` `{ credentialId (base64url or base64),
 *   publicKey (ECDSA P-256: SPKI DER in base64, or a JWK object) }`;
 *   `DELETE /accounts/:phone/passkey/authenticator`;
 * - `POST /accounts/:phone/passkey/faults` `{ rejectAssertion?, withholdContinuation?, omitOptions?,
 *   codeWithoutWrappedKey? (booleans), timeoutMs? (ms > 0, or null: 600 s) }` — the fields given;
 * - `POST /accounts/:phone/passkey/confirm` `{ code? }`: the user confirms on the phone the code it
 *   shows (`code`, when given, must be it).
 */
export function passkeyRoutes(sim: PasskeyApiContext): Array<[string, RegExp, Handler]> {
  const passkeys = sim.passkeys;
  return [
    ['GET', /^\/accounts\/([^/]+)\/passkey$/, (_b, [phone]) => passkeys.view(phone!)],
    [
      'POST',
      /^\/accounts\/([^/]+)\/passkey\/gate$/,
      (b, [phone]) => {
        if (typeof b.gate !== 'string')
          throw new SimError(`gate must be one of ${PASSKEY_GATES.join(', ')}`, 400);
        passkeys.setGate(phone!, b.gate as PasskeyGate);
        return passkeys.view(phone!);
      },
    ],
    [
      'DELETE',
      /^\/accounts\/([^/]+)\/passkey\/gate$/,
      (_b, [phone]) => {
        passkeys.setGate(phone!, 'none');
        return passkeys.view(phone!);
      },
    ],
    [
      'POST',
      /^\/accounts\/([^/]+)\/passkey\/authenticator$/,
      (b, [phone]) => {
        const credentialId =
          typeof b.credentialId === 'string' ? Buffer.from(b.credentialId, 'base64url') : Buffer.alloc(0);
        if (credentialId.length === 0)
          throw new SimError('credentialId is required (the credential id, base64url)', 400);
        let publicKey;
        try {
          publicKey = parsePasskeyPublicKey(b.publicKey);
        } catch (err) {
          throw new SimError((err as Error).message, 400);
        }
        passkeys.setAuthenticator(phone!, { credentialId, publicKey });
        return passkeys.view(phone!);
      },
    ],
    [
      'DELETE',
      /^\/accounts\/([^/]+)\/passkey\/authenticator$/,
      (_b, [phone]) => {
        passkeys.setAuthenticator(phone!, undefined);
        return passkeys.view(phone!);
      },
    ],
    [
      'POST',
      /^\/accounts\/([^/]+)\/passkey\/faults$/,
      (b, [phone]) => {
        passkeys.setFaults(phone!, faultsOf(b));
        return passkeys.view(phone!);
      },
    ],
    [
      'POST',
      /^\/accounts\/([^/]+)\/passkey\/confirm$/,
      (b, [phone]) => {
        if (b.code !== undefined && typeof b.code !== 'string')
          throw new SimError('code must be a string', 400);
        return passkeys.confirm(phone!, b.code);
      },
    ],
  ];
}

/** The fault fields of a body, checked (all of them before any is set). */
function faultsOf(b: Body): Partial<PasskeyFaults> {
  const out: Partial<PasskeyFaults> = {};
  for (const key of FAULT_SWITCHES) {
    const value = b[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new SimError(`${key} must be true or false`, 400);
    out[key] = value;
  }
  if (b.timeoutMs !== undefined) {
    const ms = b.timeoutMs;
    if (ms !== null && (typeof ms !== 'number' || !(ms > 0 && ms <= MAX_TIMER_MS)))
      throw new SimError(`timeoutMs must be a number of ms from 1 to ${MAX_TIMER_MS}, or null (600 s)`, 400);
    out.timeoutMs = ms;
  }
  return out;
}
