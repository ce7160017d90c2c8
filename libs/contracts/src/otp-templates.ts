import type { OtpLanguage } from './limits.js';

/**
 * OTP message templates. The code comes first, in WhatsApp bold (*…*), so it is easy to copy
 * from the notification; the sentence says it is a verification code that must not be shared.
 */
const TEMPLATES: Record<OtpLanguage, (code: string) => string> = {
  English: (code) => `*${code}* is your verification code. For your security, do not share this code.`,
  Arabic: (code) => `*${code}* هو رمز التحقق الخاص بك. للحفاظ على أمانك، لا تشارك هذا الرمز مع أي شخص.`,
};

export function renderOtp(code: string, language: OtpLanguage): string {
  return TEMPLATES[language](code);
}
