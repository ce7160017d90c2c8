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

/**
 * Stores values as they are. A stand-in until the at-rest encryption lands (it implements
 * `Sealer`); nothing else should use it.
 */
export const identitySealer: Sealer = {
  seal: (plain) => plain,
  open: (sealed) => sealed,
  sealText: (plain) => plain,
  openText: (sealed) => sealed,
};
