/** What the simulator is configured with: phone numbers (with their token and app), templates. */
import type { MessagingTier } from './rate.js';

export type QualityRating = 'GREEN' | 'YELLOW' | 'RED' | 'UNKNOWN';
export const QUALITY_RATINGS: readonly QualityRating[] = ['GREEN', 'YELLOW', 'RED', 'UNKNOWN'];

export interface PhoneNumberConfig {
  /** The phone-number id of the Graph paths. */
  id: string;
  /** The WhatsApp Business Account the number belongs to (templates are the WABA's). */
  wabaId: string;
  /** `display_phone_number`, e.g. `+1 555-010-0001`. */
  displayPhoneNumber: string;
  verifiedName: string;
  /** Default GREEN. */
  qualityRating?: QualityRating;
  /** Default TIER_1K. */
  messagingLimitTier?: MessagingTier;
  /** Messages per second the number may send (default 80, the reference's default throughput). */
  throughputPerSecond?: number;
  /** The system user's access token for this number (one token may serve several numbers). */
  accessToken: string;
  /** The Meta app whose webhook receives this number's events (default `app-<wabaId>`). */
  appId?: string;
  /** The app secret the webhook payloads are signed with. */
  appSecret: string;
}

export type TemplateStatus = 'APPROVED' | 'PENDING' | 'REJECTED' | 'PAUSED' | 'DISABLED';
export const TEMPLATE_STATUSES: readonly TemplateStatus[] = [
  'APPROVED',
  'PENDING',
  'REJECTED',
  'PAUSED',
  'DISABLED',
];
export type TemplateCategory = 'AUTHENTICATION' | 'MARKETING' | 'UTILITY';
export const TEMPLATE_CATEGORIES: readonly TemplateCategory[] = ['AUTHENTICATION', 'MARKETING', 'UTILITY'];

export interface TemplateConfig {
  wabaId: string;
  name: string;
  /** Language code, e.g. `en_US`. */
  language: string;
  category: TemplateCategory;
  /** Default APPROVED. */
  status?: TemplateStatus;
  components: unknown[];
  id?: string;
}

/**
 * Two templates for a WABA, as `message_templates` lists them: an AUTHENTICATION one with a
 * copy-code button, and a UTILITY one with a body parameter.
 * https://developers.facebook.com/docs/whatsapp/business-management-api/authentication-templates
 */
export function sampleTemplates(wabaId: string): TemplateConfig[] {
  return [
    {
      wabaId,
      name: 'verification_code',
      language: 'en_US',
      category: 'AUTHENTICATION',
      components: [
        {
          type: 'BODY',
          text: '*{{1}}* is your verification code. For your security, do not share this code.',
          add_security_recommendation: true,
        },
        { type: 'FOOTER', text: 'This code expires in 10 minutes.', code_expiration_minutes: 10 },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
      ],
    },
    {
      wabaId,
      name: 'order_update',
      language: 'en_US',
      category: 'UTILITY',
      components: [
        { type: 'BODY', text: 'Your order {{1}} has shipped.', example: { body_text: [['#1234']] } },
      ],
    },
  ];
}
