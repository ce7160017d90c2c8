/**
 * What the reach-out rules decided about a one-to-one message (reachout.ts `admit`), and what they
 * saw. It lives apart because first-contacts.ts records it while reachout.ts imports
 * first-contacts.ts (to check a cstoken).
 */
export interface Admission {
  /** The error code to ack with; undefined: the message goes through. */
  error?: number;
  /** The account had no chat with the recipient yet. */
  firstContact: boolean;
  /** The tctoken is the one the recipient issued to the account. */
  tctokenValid: boolean;
  /** The cstoken is HMAC-SHA256(the account's NCT salt, the recipient's LID); absent: none carried. */
  cstokenValid?: boolean;
}
