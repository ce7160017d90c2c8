/**
 * A device's sending policy: caps per window, warm-up, first contacts, OTP reserve, quiet hours
 * and the pause WhatsApp's push-back starts. The sender enforces it
 * (services/sender/src/send-gate.ts); the API shows it (GET /status) and the admin API changes it.
 *
 * - config.ts: the policy, its environment defaults and the admin API's override schema
 * - device-settings.ts: a device's overrides and warm-up start, and the policy in force
 * - windows.ts: the clock (cap window, quiet hours) and the cap of a window
 * - admission.ts, admission-script.ts: the counters, and taking one message of a window
 * - restriction.ts: the device's pause
 * - status-view.ts: what GET /status and the admin API show
 */
export {
  formatQuiet,
  isTimeZone,
  POLICY_FIELDS,
  policyOverrideSchema,
  SEND_POLICY_ENV,
  sendPolicyConfig,
  type PolicyField,
  type PolicyOverride,
  type SendPolicy,
  type SendPolicyConfig,
} from './config.js';
export { effectivePolicy, readOverrides, startWarmup, writeOverrides } from './device-settings.js';
export { capOf, capWindow, capWithoutReserve, quietUntil } from './windows.js';
export {
  admitMessage,
  forgetAccount,
  releaseMessage,
  rememberChats,
  type Admission,
  type CapName,
} from './admission.js';
export {
  clearRestriction,
  getRestriction,
  markRestricted,
  RESTRICTION_REASONS,
  type Restriction,
  type RestrictionReason,
} from './restriction.js';
export { sendingView, type SendingView } from './status-view.js';
