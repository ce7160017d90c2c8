/**
 * The Cloud API's rules at accept time (docs/cloud-api.md): templates (cloud devices only, checked
 * against the number's WABA), the 24-hour window of free-form messages, and the OTP's
 * authentication template. Used by /send (features/send) and /otp (features/otp).
 */
export { cloudOtpTemplate, cloudSendRefusal, type CloudSendDeps } from './cloud-send.js';
export { EngineCache } from './engine-cache.js';
export { TemplateCatalog, type CatalogEntry, type CatalogList } from './template-catalog.js';
export { templateParams, type TemplateComponentView, type TemplateParams } from './template-components.js';
export { templateRefusal } from './template-check.js';
