/**
 * What the Cloud API section (cloud-section.tsx) knows without the DOM: the form's fields, the body
 * it sends, the fields an API refusal names, and how a number's quality and tier are written.
 * Kept apart so that its fast test (cloud-form.test.ts) runs without a browser.
 */
import type { CloudDeviceInput, Device } from '../kit/api';
import { ownEntry } from '../kit/format';

/**
 * Where Meta's webhooks arrive, one endpoint per install (`CLOUD_WEBHOOK_PATH` of the contracts,
 * which the console may not import: cloud-form.test.ts checks they are the same).
 */
export const CLOUD_WEBHOOK_PATH = '/api/cloud/v1/webhook';

export type CloudField = keyof CloudDeviceInput;

export interface CloudFieldSpec {
  field: CloudField;
  label: string;
  hint: string;
  /** A credential: a password field, sent once, never shown again, emptied after every request. */
  secret?: boolean;
  /** Has a default: left empty, it is not sent. */
  optional?: boolean;
  placeholder?: string;
}

/** The form's fields, in its order: the five the API needs, then the three with a default. */
export const CLOUD_FIELDS: readonly CloudFieldSpec[] = [
  {
    field: 'phoneNumberId',
    label: 'Phone-number ID',
    hint: 'Meta’s id of the number (WhatsApp Manager → API Setup), not the number itself.',
    placeholder: '106540352242922',
  },
  {
    field: 'wabaId',
    label: 'WhatsApp Business Account ID',
    hint: 'The account the number belongs to: its templates are listed there.',
    placeholder: '102290129340398',
  },
  {
    field: 'accessToken',
    label: 'Access token',
    hint: 'A system user’s permanent token with whatsapp_business_messaging (and _management for templates).',
    secret: true,
  },
  {
    field: 'appSecret',
    label: 'App secret',
    hint: 'The Meta app’s secret: Meta signs its webhooks with it.',
    secret: true,
  },
  {
    field: 'verifyToken',
    label: 'Verify token',
    hint: 'A string of your choice: give Meta the same one with the callback URL.',
    secret: true,
  },
  {
    field: 'throughputPerSecond',
    label: 'Throughput (messages/s)',
    hint: 'Optional: 80 unless Meta raised the number’s.',
    optional: true,
    placeholder: '80',
  },
  {
    field: 'graphVersion',
    label: 'Graph API version',
    hint: 'Optional: v21.0 unless set.',
    optional: true,
    placeholder: 'v21.0',
  },
  {
    field: 'otpTemplate',
    label: 'OTP template',
    hint: 'Optional: the authentication template /otp sends; verification_code unless set.',
    optional: true,
    placeholder: 'verification_code',
  },
];

export type CloudFormText = Record<CloudField, string>;

export const EMPTY_CLOUD_FORM: CloudFormText = {
  phoneNumberId: '',
  wabaId: '',
  accessToken: '',
  appSecret: '',
  verifyToken: '',
  throughputPerSecond: '',
  graphVersion: '',
  otpTemplate: '',
};

/** The form as typed, its secrets emptied: what stays after a request, whichever way it went. */
export function withoutSecrets(form: CloudFormText): CloudFormText {
  const kept = { ...form };
  for (const { field, secret } of CLOUD_FIELDS) if (secret) kept[field] = '';
  return kept;
}

/**
 * PUT /cloud's body from the form: every field trimmed (a pasted token often ends in a newline), an
 * empty optional field left out (its default applies), the throughput a number when it is one —
 * otherwise the text itself, for the API's 400 to name the field.
 */
export function cloudBody(
  form: CloudFormText,
): Omit<CloudDeviceInput, 'throughputPerSecond'> & { throughputPerSecond?: number | string } {
  const text = (f: CloudField) => form[f].trim();
  const throughput = text('throughputPerSecond');
  return {
    phoneNumberId: text('phoneNumberId'),
    wabaId: text('wabaId'),
    accessToken: text('accessToken'),
    appSecret: text('appSecret'),
    verifyToken: text('verifyToken'),
    ...(throughput === ''
      ? {}
      : { throughputPerSecond: /^[0-9]+$/.test(throughput) ? Number(throughput) : throughput }),
    ...(text('graphVersion') === '' ? {} : { graphVersion: text('graphVersion') }),
    ...(text('otpTemplate') === '' ? {} : { otpTemplate: text('otpTemplate') }),
  };
}

/**
 * The form's fields an API refusal names, each with what the API said of it: the 400's `details`
 * (a field the body got wrong) and the 422's (the field Meta's refusal is about: the token, or the
 * number id). Details about anything else are left to the message next to the form.
 */
export function refusedFields(details: unknown): Partial<Record<CloudField, string>> {
  const found: Partial<Record<CloudField, string>> = {};
  if (!Array.isArray(details)) return found;
  for (const d of details as { path?: unknown; message?: unknown }[]) {
    const field = Array.isArray(d?.path) ? d.path[0] : undefined;
    const spec = CLOUD_FIELDS.find((f) => f.field === field);
    if (spec && typeof d.message === 'string' && found[spec.field] === undefined)
      found[spec.field] = d.message;
  }
  return found;
}

/**
 * What the message next to the form says of a refusal: the API's error alone when each of its
 * details is shown at the field it names (Meta's words once, where they apply), else the whole
 * message (the kit's: the error and every detail).
 */
export function formFailure(error: unknown, details: unknown, message: string): string {
  const shown = Object.keys(refusedFields(details)).length;
  return typeof error === 'string' && Array.isArray(details) && shown > 0 && shown === details.length
    ? `${error}: see the field marked above.`
    : message;
}

/**
 * Whether the device is linked by QR or pairing code (or being linked): it cannot be made a Cloud
 * API number before it is disconnected (the API answers 409).
 */
export function linkedByCode(d: Pick<Device, 'engine' | 'linked' | 'status'>): boolean {
  return d.engine === 'linked' && (d.linked || d.status !== 'disconnected');
}

/** Meta's quality rating in words, and the badge colour of its band. */
export function qualityOf(rating: string): {
  words: string;
  band: 'connected' | 'connecting' | 'failed' | '';
} {
  switch (rating) {
    case 'GREEN':
      return { words: 'High (green)', band: 'connected' };
    case 'YELLOW':
      return { words: 'Medium (yellow)', band: 'connecting' };
    case 'RED':
      return { words: 'Low (red)', band: 'failed' };
    default:
      return { words: rating === 'UNKNOWN' ? 'Not rated yet' : rating, band: '' };
  }
}

const TIERS: Record<string, string> = {
  TIER_50: '50',
  TIER_250: '250',
  TIER_1K: '1,000',
  TIER_10K: '10,000',
  TIER_100K: '100,000',
};

/** Meta's messaging tier in words: how many new contacts the number may reach in 24 hours. */
export function tierWords(tier: string | undefined): string {
  if (!tier) return 'not given by Meta';
  if (tier === 'TIER_UNLIMITED') return 'unlimited new contacts';
  const n = ownEntry(TIERS, tier);
  return n ? `${n} new contacts / 24 h` : tier;
}

/** Why Meta's refusal left the number disconnected, and what to do (the API's reason codes). */
const CLOUD_REASONS: Record<string, string> = {
  cloud_token_expired:
    'Meta refused the access token (expired, revoked or without the permission): replace the credentials.',
  number_blocked: 'Meta blocked the number or its account: see WhatsApp Manager.',
};

/** A cloud device's disconnection reason in words (a reason of no table: its code, spaced). */
export function cloudReasonWords(reason: string): string {
  return ownEntry(CLOUD_REASONS, reason) ?? reason.replace(/_/g, ' ');
}
