import { CONNECTION_MESSAGES, ERRORS, type ConnectRequest, type ConnectionReply } from '@mgw/contracts';
import { qrToDataUrl } from '@mgw/messenger';
import type { PairingRecord } from '@mgw/store';

/** Why a pairing ended before it showed a code, as the connect that waited for it answers. */
export function pairingEndedReply(reason: string): ConnectionReply {
  switch (reason) {
    // Client races: the device's owner asked for something else meanwhile.
    case 'disconnect_requested':
      return { success: false, error: ERRORS.pairingCancelledByDisconnect, httpStatus: 409 };
    case 'force_new':
      return { success: false, error: ERRORS.pairingReplaced, httpStatus: 409 };
    case 'lease_lost':
      return { success: false, error: ERRORS.deviceBusy, httpStatus: 409 };
    case 'shutdown':
      return { success: false, error: ERRORS.connectionServiceDown, httpStatus: 503 };
    // WhatsApp gave no QR / code (unreachable, refused, too slow).
    default:
      return { success: false, error: ERRORS.pairingNotStartedPrefix + reason, httpStatus: 503 };
  }
}

export const LINKED_CONNECTING: ConnectionReply = {
  success: true,
  status: 'connecting',
  message: CONNECTION_MESSAGES.linkedConnecting,
};

/** The current QR (PNG data URL, or raw) or pairing code of a pairing, as this request wants it. */
export async function codeReply(req: ConnectRequest, rec: PairingRecord): Promise<ConnectionReply> {
  // The QR or code was used: the link waits for the passkey now (no code to show again).
  if (rec.passkeyStep)
    return { success: true, status: 'connecting', message: CONNECTION_MESSAGES.passkeyPending };
  if (req.method === 'pairingCode') {
    return { success: true, status: 'connecting', pairingCode: rec.pairingCode };
  }
  const qr = rec.qr ?? '';
  return { success: true, status: 'connecting', qrCode: req.rawQrCode ? qr : await qrToDataUrl(qr) };
}

/** A pairing by pairing code answers only a connect for the same phone number. */
export function sameRequest(req: ConnectRequest, rec: PairingRecord): boolean {
  if (rec.method !== req.method) return false;
  return req.method !== 'pairingCode' || rec.phone === (req.phoneNumber ?? '');
}
