/**
 * WhatsApp's limits on groups as this gateway applies them: read by the group routes' schemas
 * (groups.ts) and by a group's info (group-info.ts), which groups.ts imports — so they live apart.
 */
export const GROUP_LIMITS = {
  /** WhatsApp's subject limit (characters). */
  subject: 100,
  /**
   * Participants per create or change request. WhatsApp takes up to 1,023 members at once; adding
   * many strangers in one go is what gets accounts banned, so one request adds at most this many.
   */
  participants: 50,
  /** Mentions on one text or caption. */
  mentions: 100,
} as const;
