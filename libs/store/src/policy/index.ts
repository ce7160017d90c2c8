/**
 * A device's sending policy: caps per window, warm-up, first contacts, OTP reserve, quiet hours
 * and the pause WhatsApp's push-back starts. The sender enforces it
 * (services/sender/src/send/send-gate.ts); the API shows it (GET /status) and the admin API changes it.
 *
 * - config.ts: the policy, its environment defaults and the admin API's override schema
 * - device-settings.ts: a device's overrides and warm-up start, and the policy in force
 * - windows.ts: the clock (cap window, quiet hours) and the cap of a window
 * - admission.ts, admission-script.ts: the counters, and taking one message of a window
 * - restriction.ts: the device's pause
 * - status-view.ts: what GET /status and the admin API show
 * - health-score.ts, health-signals.ts: the device's health score (0–100 with its reasons)
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
  capTakeCall,
  forgetAccount,
  releaseMessage,
  rememberChats,
  type Admission,
  type CapName,
  type CapTake,
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
export {
  HEALTH_LOW_SCORE,
  HEALTH_REASONS,
  HEALTH_WEIGHTS,
  scoreHealth,
  type DeviceHealth,
  type HealthReason,
  type HealthReasonCode,
  type HealthSignals,
} from './health-score.js';
export {
  deviceHealth,
  HEALTH_SIGNALS,
  HEALTH_WINDOW_HOURS,
  healthCounts,
  HealthWindow,
  recordHealthSignal,
  type HealthSignal,
} from './health-signals.js';
