import { getBinaryNodeChild, S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import type { WASocket } from './socket.js';

/**
 * The account's "about" as WhatsApp keeps it in 2026: a text status set by the GraphQL mutation
 * `xwa2_update_text_status` (persisted query 9152604461510864, whatsmeow 662b0121; its PR #1219:
 * "the old [`<iq xmlns="status">`] still exists and is called by the client, but only the new one
 * actually updates the status message"). WhatsApp Web sends the mutation, waits for it, then the
 * old iq; so do we. Baileys rc14 sends only the old iq: the about it "set" never changed.
 */
export const UPDATE_TEXT_STATUS_QUERY = '9152604461510864';
export const UPDATE_TEXT_STATUS_PATH = 'xwa2_update_text_status';

/** Sets the account's about (an empty text clears it): the mutation, then the legacy iq. */
export async function setTextStatus(sock: WASocket, about: string): Promise<void> {
  const variables = { input: { text: about === '' ? null : about, ephemeral_duration_sec: 0 } };
  const answer = (await sock.query({
    tag: 'iq',
    attrs: { id: sock.generateMessageTag(), type: 'get', to: S_WHATSAPP_NET, xmlns: 'w:mex' },
    content: [
      {
        tag: 'query',
        attrs: { query_id: UPDATE_TEXT_STATUS_QUERY },
        content: Buffer.from(JSON.stringify({ variables }), 'utf8'),
      },
    ],
  })) as BinaryNode;
  mutationOutcome(answer);
  await sock.updateProfileStatus(about);
}

/**
 * Throws, with the GraphQL error code as Baileys' mex helper gives it (`output.statusCode`, read by
 * whatsappErrorCode), unless the mutation answered.
 */
export function mutationOutcome(answer: BinaryNode): void {
  const content = getBinaryNodeChild(answer, 'result')?.content;
  const body = content ? (JSON.parse(Buffer.from(content as Uint8Array).toString('utf8')) as MexBody) : {};
  const error = body.errors?.[0];
  if (error)
    refused(`GraphQL server error: ${error.message ?? 'unknown'}`, error.extensions?.error_code ?? 400);
  if (!body.data || !(UPDATE_TEXT_STATUS_PATH in body.data))
    refused('the about was not set: unexpected answer', 400);
}

function refused(message: string, statusCode: number): never {
  throw Object.assign(new Error(message), { output: { statusCode } });
}

interface MexBody {
  data?: Record<string, unknown>;
  errors?: { message?: string; extensions?: { error_code?: number } }[];
}
