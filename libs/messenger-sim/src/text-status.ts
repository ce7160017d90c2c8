import { getBinaryNodeChild, type BinaryNode } from '@whiskeysockets/baileys';
import type { SimUser } from './directory.js';
import { profileOf } from './account-profile.js';
import { bytesOf } from './stanza.js';

/**
 * The account's "about" as WhatsApp keeps it in 2026: a text status set by the GraphQL mutation
 * `xwa2_update_text_status` (persisted query 9152604461510864, `{ input: { text, emoji?,
 * ephemeral_duration_sec } }`), as whatsmeow reads it since 662b0121 (Aug 2026; its PR #1219: the
 * old `<iq xmlns="status">` "still exists and is called by the client, but only the new one
 * actually updates the status message"). So here: the mutation sets the about contacts read
 * (usync `status`); the legacy iq is answered and changes nothing (account-profile.ts).
 *
 * The answer is `{ data: { xwa2_update_text_status: { result } } }` (WhatsApp Web reads `result`);
 * its value is not documented: the simulator says "SUCCESS". A text over 139 characters is
 * refused with a GraphQL error (406), as the legacy iq refused it.
 */
export const UPDATE_TEXT_STATUS_QUERY = '9152604461510864';
const MAX_ABOUT_CHARS = 139;

type GraphQlBody =
  { data: Record<string, unknown> } | { errors: { message: string; extensions: { error_code: number } }[] };
const refusal = (message: string, code: number): GraphQlBody => ({
  errors: [{ message, extensions: { error_code: code } }],
});

/** The mutation's answer for `account` (undefined: not logged in). */
export function textStatusMutation(account: SimUser | undefined, iq: BinaryNode): GraphQlBody {
  if (!account) return refusal('not logged in', 401);
  let input: { text?: unknown } | undefined;
  try {
    const raw = bytesOf(getBinaryNodeChild(iq, 'query'))?.toString('utf8') ?? '{}';
    input = (JSON.parse(raw) as { variables?: { input?: { text?: unknown } } }).variables?.input;
  } catch {
    return refusal('query variables are not JSON', 400);
  }
  if (!input || (input.text !== null && input.text !== undefined && typeof input.text !== 'string'))
    return refusal('input.text must be a string or null', 400);
  const text = typeof input.text === 'string' ? input.text : '';
  if (text.length > MAX_ABOUT_CHARS) return refusal('text status too long', 406);
  const state = profileOf(account);
  state.about = text || undefined;
  state.aboutSetAt = Date.now();
  return { data: { xwa2_update_text_status: { result: 'SUCCESS' } } };
}
