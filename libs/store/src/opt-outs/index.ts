/**
 * Opt-outs: a device's suppression list and the keywords and confirmations that change it.
 *
 * - settings.ts: the keywords, the confirmation texts, per device (beside the policy overrides)
 * - suppression.ts: the list itself, its events, and its pages for the admin API
 */
export {
  confirmationText,
  matchKeyword,
  normalizeKeyword,
  OPT_OUT_DEFAULTS,
  OPT_OUT_FIELDS,
  optOutSettingsSchema,
  readOptOutSettings,
  writeOptOutSettings,
  type KeywordMatch,
  type OptOutLanguage,
  type OptOutSettings,
  type OptOutSettingsChange,
} from './settings.js';
export {
  isOptedOut,
  isOptedOutInPool,
  isOptOutCursor,
  listOptOuts,
  optIn,
  optOut,
  type OptOutEntry,
  type OptOutPage,
  type OptOutSource,
} from './suppression.js';
