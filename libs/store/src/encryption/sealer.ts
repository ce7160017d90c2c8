/**
 * Seals values before they reach Redis (authenticated encryption bound to where the value is
 * stored: `context`, e.g. the Redis key and field). The store takes one and never sees a key.
 */
export interface Sealer {
  seal(plain: Buffer, context: string): Buffer;
  open(sealed: Buffer, context: string): Buffer;
  sealText(plain: string, context: string): string;
  openText(sealed: string, context: string): string;
}
