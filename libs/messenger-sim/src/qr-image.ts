import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS with `exports.default`; under NodeNext the default import is the whole module
const jsQR = (jsQRModule as unknown as { default: typeof jsQRModule.default }).default;

const DATA_URL = /^data:image\/png;base64,/i;

/** Accepts the raw QR string or the PNG data URL a gateway's /connect hands out. */
export function qrPayload(input: string): string {
  const trimmed = input.trim();
  if (!DATA_URL.test(trimmed)) return trimmed;
  const png = PNG.sync.read(Buffer.from(trimmed.replace(DATA_URL, ''), 'base64'));
  const decoded = jsQR(
    new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length),
    png.width,
    png.height,
  );
  if (!decoded) throw new Error('no QR code found in the image');
  return decoded.data;
}
