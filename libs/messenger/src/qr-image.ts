import QRCode from 'qrcode';

/** The QR as the spec's shape: a PNG data URL (`data:image/png;base64,…`). */
export function qrToDataUrl(qr: string): Promise<string> {
  return QRCode.toDataURL(qr, { errorCorrectionLevel: 'L', margin: 2, scale: 6 });
}
